import { expect } from 'chai';
import { jsonShapeProblem, MAX_JSON_DEPTH } from '../../src/http/json-depth.js';

const arrays = (n: number) => '['.repeat(n) + ']'.repeat(n);
/** the depth check alone: fields uncounted */
const jsonDepthExceeds = (text: Uint8Array | string) => jsonShapeProblem(text, undefined, { depth: MAX_JSON_DEPTH, fields: Infinity }) === 'depth';

describe('jsonShapeProblem: depth (bracket count before parsing)', () => {
  it('64 levels pass, 65 do not, as text and as UTF-8 bytes', () => {
    expect(MAX_JSON_DEPTH).to.equal(64);
    for (const convert of [(s: string) => s, (s: string) => Buffer.from(s)]) {
      expect(jsonDepthExceeds(convert(arrays(64)))).to.equal(false);
      expect(jsonDepthExceeds(convert(arrays(65)))).to.equal(true);
      expect(jsonDepthExceeds(convert('{"a":'.repeat(65) + '1' + '}'.repeat(65)))).to.equal(true);
      // siblings are not depth
      expect(jsonDepthExceeds(convert(`[${'[[1]],'.repeat(1000)}1]`))).to.equal(false);
    }
  });

  it('ignores brackets inside strings, escaped quotes included, and multi-byte characters', () => {
    expect(jsonDepthExceeds(JSON.stringify({ a: '['.repeat(100) }))).to.equal(false);
    expect(jsonDepthExceeds(JSON.stringify({ a: '\\"' + '{'.repeat(100), b: '"[[[' }))).to.equal(false);
    expect(jsonDepthExceeds(Buffer.from(JSON.stringify({ a: 'é€😀'.repeat(50) + '['.repeat(100) })))).to.equal(false);
    // a string that closes, then real brackets
    expect(jsonDepthExceeds(`["\\\\"${','.repeat(1)}${arrays(64)}]`)).to.equal(true);
  });

  it('agrees with a walk over the parsed value on strings of every escape, as text and as bytes', () => {
    const depthOf = (v: unknown): number => (Array.isArray(v) ? 1 + Math.max(0, ...v.map(depthOf)) : v && typeof v === 'object' ? 1 + Math.max(0, ...Object.values(v).map(depthOf)) : 0);
    const pieces = ['\\', '"', '\\"', '[', '{', ']', '}', 'x', 'é', '\n'];
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff), seed / 0x7fffffff);
    for (let n = 0; n < 300; n++) {
      const str = () => Array.from({ length: Math.floor(random() * 12) }, () => pieces[Math.floor(random() * pieces.length)]).join('');
      let value: unknown = str();
      const levels = Math.floor(random() * 70);
      for (let l = 0; l < levels; l++) value = random() < 0.5 ? [str(), value, str()] : { [str()]: value, k: str() };
      const text = JSON.stringify(value);
      expect(jsonDepthExceeds(text), text).to.equal(depthOf(value) > MAX_JSON_DEPTH);
      expect(jsonDepthExceeds(Buffer.from(text)), text).to.equal(depthOf(value) > MAX_JSON_DEPTH);
    }
  });

  it('stops at the first bracket too many, however long the body', () => {
    expect(jsonDepthExceeds('['.repeat(10_000_000))).to.equal(true);
  });
});

describe('jsonShapeProblem: depth, and fields counted before parsing', () => {
  it('counts object fields (colons outside strings) up to the limit, as text and as bytes', () => {
    const fields = (n: number) => `{${Array.from({ length: n }, (_, i) => `"k${i}":1`).join(',')}}`;
    const limits = { depth: MAX_JSON_DEPTH, fields: 3 };
    for (const convert of [(t: string) => t, (t: string) => Buffer.from(t)]) {
      expect(jsonShapeProblem(convert(fields(3)), undefined, limits)).to.equal(null);
      expect(jsonShapeProblem(convert(fields(4)), undefined, limits)).to.equal('fields');
      expect(jsonShapeProblem(convert(JSON.stringify({ a: 'x:y:z:w:v' })), undefined, limits)).to.equal(null);
      expect(jsonShapeProblem(convert('[' + '['.repeat(70) + ']'.repeat(70) + ']'), undefined, limits)).to.equal('depth');
    }
  });
});
