import { expect } from 'chai';
import canonicalizeModule from 'canonicalize';
import fc from 'fast-check';
import { canonicalJson } from '../../../src/domain/idempotency/canonical-json.js';

// the RFC 8785 package the fingerprint used before, as the oracle: stored fingerprints must not change
const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

describe('domain/idempotency/canonical-json: RFC 8785 canonical form, total', () => {
  it('writes every finite JSON value exactly as the canonicalize package does', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        expect(canonicalJson(value)).to.equal(canonicalize(value));
      }),
      { numRuns: 2000 },
    );
    expect(canonicalJson({ b: [1, 'x', null, { d: 1e21, c: -0 }], a: '\u2028é', __proto__x: true })).to.equal(canonicalize({ b: [1, 'x', null, { d: 1e21, c: -0 }], a: '\u2028é', __proto__x: true }));
    expect(canonicalJson(JSON.parse('{"__proto__":{"a":1},"z":2}'))).to.equal('{"__proto__":{"a":1},"z":2}');
  });

  it('never throws on parsed JSON: numbers past ±1.8e308 are written as no JSON text can be', () => {
    const parsed = JSON.parse('{"variables":{"x":1e999,"y":-1e999,"z":[1e999]}}');
    expect(() => canonicalize(parsed)).to.throw('Infinity is not allowed');
    expect(canonicalJson(parsed)).to.equal('{"variables":{"x":Infinity,"y":-Infinity,"z":[Infinity]}}');
    expect(canonicalJson({ x: Number.NaN })).to.equal('{"x":NaN}');
    // distinct from the string that spells it
    expect(canonicalJson({ x: 'Infinity' })).to.not.equal(canonicalJson({ x: Infinity }));
  });

  it('takes any nesting without overflowing the stack', () => {
    const deep = JSON.parse('['.repeat(200_000) + ']'.repeat(200_000));
    expect(canonicalJson(deep)).to.have.length(400_000);
  });
});
