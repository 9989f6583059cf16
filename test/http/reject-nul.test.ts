import { expect } from 'chai';
import { findUnstorable, rejectUnstorable, toStorable } from '../../src/http/reject-nul.js';

/** `levels` arrays inside one another, built without JSON (nothing here may recurse over it) */
function nested(levels: number): unknown {
  let v: unknown = [];
  for (let i = 1; i < levels; i++) v = [v];
  return v;
}

describe('findUnstorable / rejectUnstorable (what PostgreSQL cannot store)', () => {
  it('names the field of a lone surrogate or a NUL, in document order', () => {
    expect(findUnstorable({ subject: 'a\ud800' })).to.deep.equal({ kind: 'surrogate', unit: 0xd800, field: 'subject', inKey: false });
    expect(findUnstorable({ variables: { name: '\udc00' } })).to.include({ kind: 'surrogate', field: 'variables.name' });
    expect(findUnstorable({ contacts: [{}, {}, {}, { firstName: 'x\u0000' }] })).to.include({ kind: 'nul', field: 'contacts[3].firstName' });
    expect(findUnstorable({ a: 'ok', b: ['\ud800'], c: '\u0000' })).to.include({ field: 'b[0]' });
    expect(findUnstorable({ v: { '\ud83d': 1 } })).to.include({ kind: 'surrogate', field: 'v', inKey: true });
    expect(findUnstorable('\ud800')).to.include({ kind: 'surrogate', field: '' });
  });

  it('passes paired surrogates, ordinary text and other values', () => {
    expect(findUnstorable({ a: '😀 \ud83d\ude00', b: [1, true, null, { c: 'é' }] })).to.equal(undefined);
    expect(findUnstorable(undefined)).to.equal(undefined);
  });

  it('refuses more than 64 levels without recursing, however deep', () => {
    expect(findUnstorable(nested(64))).to.equal(undefined);
    expect(findUnstorable(nested(65))).to.include({ kind: 'depth' });
    expect(findUnstorable(nested(1_000_000))).to.include({ kind: 'depth' });
    expect(() => rejectUnstorable({ 'request body': nested(100_000) })).to.throw('request body is nested deeper than 64 levels');
  });

  it('rejectUnstorable: 400 naming where and which field', () => {
    expect(() => rejectUnstorable({ 'request body': { tags: ['a', 'b\ud800'] } }))
      .to.throw('request body contains an unpaired UTF-16 surrogate (U+D800) in tags[1], which is not accepted')
      .with.property('status', 400);
    expect(() => rejectUnstorable({ 'request body': {}, 'query string': { search: 'a\u0000' } })).to.throw(
      'query string contains a NUL character (U+0000) in search, which is not accepted',
    );
  });

  it('toStorable replaces NUL and lone surrogates by U+FFFD in strings and keys, and keeps pairs', () => {
    expect(toStorable({ 'k\u0000': ['a\ud800b', '\udc00', '😀'], n: 1 })).to.deep.equal({ 'k\ufffd': ['a\ufffdb', '\ufffd', '😀'], n: 1 });
    expect(() => toStorable(nested(100_000))).to.throw('request body is nested deeper than 64 levels');
    expect(toStorable(nested(64))).to.deep.equal(nested(64));
  });
});
