import { expect } from 'chai';
import sinon from 'sinon';
import { parseJsonBody } from '../../src/http/json-body.js';

const arrays = (n: number) => '['.repeat(n) + ']'.repeat(n);
const LONG = 64 * 1024;
const base64 = (n: number) => Buffer.alloc(n, 'courier-ledger').toString('base64');

describe('parseJsonBody (the JSON request body)', () => {
  it('gives what JSON.parse gives, long strings cut out of the text or not', () => {
    const values: unknown[] = [
      { to: 'a@example.org', attachments: [{ filename: 'a.pdf', content: base64(LONG) }, { filename: 'b.pdf', content: base64(3 * LONG) }] },
      // escapes, characters beyond ASCII and control characters (escaped) leave a long string to the parser
      { html: '<p>' + 'é€😀 "quoted" \\ back\\slash\n\t'.repeat(LONG / 8) + '</p>', text: 'x'.repeat(LONG) + '/' },
      // a long key stays a key
      { ['k'.repeat(LONG)]: 'v'.repeat(LONG), nested: [[{ deep: 'y'.repeat(LONG + 1) }]] },
      ['z'.repeat(LONG), 'short', 42, null, true, { '': '' }],
      'w'.repeat(LONG),
      3.5,
    ];
    for (const value of values) {
      const text = JSON.stringify(value);
      expect(parseJsonBody(Buffer.from(text))).to.deep.equal(JSON.parse(text));
      // the same with whitespace around every token
      const spaced = JSON.stringify(value, null, 2);
      expect(parseJsonBody(Buffer.from(spaced))).to.deep.equal(value);
    }
  });

  it("never hands an attachment's base64 to JSON.parse: the parser sees a text of a few hundred bytes", () => {
    const parse = sinon.spy(JSON, 'parse');
    try {
      const body = { to: 'a@example.org', attachments: [{ filename: 'a.pdf', content: base64(1024 * 1024) }] };
      expect(parseJsonBody(Buffer.from(JSON.stringify(body)))).to.deep.equal(body);
      expect(Math.max(...parse.getCalls().map((call) => String(call.args[0]).length))).to.be.below(500);
    } finally {
      parse.restore();
    }
  });

  it('refuses what JSON.parse refuses, long strings included: a raw control character, a missing quote, trailing garbage', () => {
    for (const text of [`{"a":"${'x'.repeat(LONG)}\n"}`, `{"a":"${'x'.repeat(LONG)}}`, `{"a":"${'x'.repeat(LONG)}"}x`, `{"a" "${'x'.repeat(LONG)}"}`, '{"a":', '{']) {
      expect(() => parseJsonBody(Buffer.from(text)), text.slice(-20))
        .to.throw()
        .with.property('type', 'entity.parse.failed');
    }
  });

  it('takes an empty body as {}, skips a UTF-8 byte-order mark, and decodes another UTF charset', () => {
    expect(parseJsonBody(Buffer.alloc(0))).to.deep.equal({});
    expect(parseJsonBody(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`{"a":"${'x'.repeat(LONG)}"}`)]))).to.deep.equal({ a: 'x'.repeat(LONG) });
    expect(parseJsonBody(Buffer.from('{"a":"é"}', 'utf16le'), 'utf-16le')).to.deep.equal({ a: 'é' });
    expect(() => parseJsonBody(Buffer.from('{}'), 'iso-8859-1')).to.throw().with.property('status', 415);
    expect(() => parseJsonBody(Buffer.from('{}'), 'utf-99')).to.throw().with.property('status', 415);
  });

  it('refuses deep UTF-8 and UTF-16 bodies with a 400 naming the limit, before parsing', () => {
    for (const [body, charset] of [
      [Buffer.from(arrays(100)), undefined],
      [Buffer.from(arrays(100), 'utf16le'), 'utf-16le'],
    ] as const) {
      expect(() => parseJsonBody(body, charset))
        .to.throw('request body is nested deeper than 64 levels')
        .with.property('status', 400);
    }
    expect(parseJsonBody(Buffer.from(arrays(64)))).to.be.an('array');
  });
});
