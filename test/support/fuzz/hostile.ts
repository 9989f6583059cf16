import fc from 'fast-check';
import { RawJson } from './json-text.js';

/** A nesting far past any recursive walker's stack (a RangeError inside a request became a 500). */
export const deepNesting = fc
  .record({ depth: fc.constantFrom(2_000, 20_000, 200_000), open: fc.constantFrom('[', '{"a":') })
  .map(({ depth, open }) => new RawJson(open.repeat(depth) + '1' + (open === '[' ? ']' : '}').repeat(depth), 'deep-nesting'));

/** Numbers JSON can spell but a JavaScript number or a PostgreSQL column cannot hold as written. */
export const oddNumber = fc.oneof(
  fc.constantFrom('1e999', '-1e999', '-0', '123456789012345678901234567890', '1e-400', '9007199254740993', '0.1e1', '-9223372036854775809').map((t) => new RawJson(t, 'odd-number')),
  fc.constantFrom(0, -1, 1.5, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 2 ** 31, -(2 ** 31) - 1, 2 ** 53 + 2, Number.MAX_VALUE, Number.MIN_VALUE),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
);

const loneSurrogate = fc.constantFrom('\ud800', '\udbff', '\udc00', '\udfff');

/** Strings no validator's author had in mind. */
export const oddString = fc.oneof(
  fc.constantFrom('', ' ', '\u0000', 'a\u0000b', '\ufeff', '\u202e', '\r\n', '%00', '%', '../../etc/passwd', '<script>alert(1)</script>', "' OR 1=1 --", '{{#a}}{{/a}}', '{{{x}}}', 'null', 'undefined', '__proto__', 'constructor', '\\', '"', '\u2028\u2029', '💌', 'Ω'.repeat(500)),
  fc.tuple(fc.string({ maxLength: 5 }), loneSurrogate, fc.string({ maxLength: 5 })).map(([a, s, b]) => a + s + b),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.tuple(fc.constantFrom('a', 'é', '💌', '\u0000', '\ud800'), fc.constantFrom(1_000, 70_000, 1_100_000)).map(([c, n]) => c.repeat(n)),
);

/** Any JSON value at all, for a field that expects something else. */
export const wrongType: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, [], {}, [null], { '': null }, JSON.parse('{"__proto__":{"polluted":1}}') as unknown, { constructor: { prototype: {} } }),
  oddNumber,
  oddString,
  fc.array(fc.oneof(fc.string(), fc.integer(), fc.constant(null)), { maxLength: 4 }),
  fc.dictionary(fc.string({ maxLength: 6 }), fc.oneof(fc.string({ maxLength: 6 }), fc.integer()), { maxKeys: 4 }),
  deepNesting,
);

/** Whole bodies that are not JSON, or not the JSON anyone expects. */
export const oddBodyText = fc.oneof(
  fc.constantFrom('', ' ', '{', '}', '[', '{"a":', '{"a":1,}', "{a:1}", 'nul', 'NaN', 'Infinity', '"\\ud800"', '"\\u0000"', '{"a":"\\x41"}', '\ufeff{}', '{}{}', '[]', '0', '"str"', 'true', 'null', '\u0000', 'a=1&b=2', '--boundary\r\n'),
  fc.string({ unit: 'binary', maxLength: 64 }),
  deepNesting.map((d) => d.text),
);

/**
 * Instants of ISO 8601's shape that PostgreSQL refuses or JavaScript reads otherwise: offsets past a
 * real time zone's, year 0000, years past 9999 once the offset is applied, a 30th of February.
 */
export const oddInstant = fc.oneof(
  fc.constantFrom('2026-11-27T10:00:00-20:00', '2026-11-27T10:00:00+16:00', '2026-11-27T10:00:00-16:00', '2026-11-27T10:00:00+23:59', '0000-01-01T00:00:00Z', '9999-12-31T23:59:59-10:00', '0001-01-01T00:00:00+01:00', '2026-02-30T00:00:00Z', '2026-11-27T10:00:00.123456789Z'),
  fc.record({ day: fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z'), noInvalidDate: true }), hours: fc.integer({ min: -23, max: 23 }), minutes: fc.integer({ min: 0, max: 59 }) }).map(
    ({ day, hours, minutes }) => `${day.toISOString().slice(0, 19)}${hours < 0 ? '-' : '+'}${String(Math.abs(hours)).padStart(2, '0')}:${String(minutes).padStart(2, '0')}`,
  ),
);

const pageEnd = fc.tuple(fc.oneof(oddInstant.map((t) => t.replace('T', ' ')), fc.constantFrom('2026-11-27 10:00:00-20', '0000-01-01 00:00:00+00', '2026-11-27 10:00:00+00', 'infinity', '')), fc.oneof(fc.constantFrom('x', 'a\u0000b', ''), oddString));

/** Cursors the service never issued: page ends (time, id) and sequence numbers PostgreSQL cannot take. */
export const oddCursor = fc.oneof(
  pageEnd.map(([at, id]) => Buffer.from(JSON.stringify([at, id])).toString('base64url')),
  fc.constantFrom('9223372036854775808', '9999999999999999999', '0', '-1', '[]', '["a"]', 'null').map((t) => Buffer.from(t).toString('base64url')),
  fc.bigInt({ min: 0n, max: 10n ** 20n }).map((n) => Buffer.from(String(n)).toString('base64url')),
);

/** Values for path segments as they go on the wire: already percent-encoded, some of them broken. */
export const oddPathSegment = fc.oneof(
  fc.constantFrom('%00', 'a%00b', '%ZZ', '%', '%E0%A4%A', '%ED%A0%80', '%C0%AF', '%2F', '..%2F..%2Fetc', '%2e%2e', '.', '%20', '%0A', '%FF%FE', '~', 'a;b=c', '%F0%9F%92%8C', '%EF%BF%BF', '*', 'null', '0', '-1'),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }).map(encodeURIComponent),
  fc.constantFrom(100, 101, 5_000, 60_000).map((n) => 'x'.repeat(n)),
);

/** Printable Latin-1, which every header value may carry (fetch refuses control characters). */
const headerValue = fc.oneof(
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 60 }),
  fc.string({ unit: fc.integer({ min: 0xa0, max: 0xff }).map((c) => String.fromCharCode(c)), maxLength: 20 }),
  fc.constantFrom('', ' ', 'x'.repeat(8_000)),
);

const base64 = (s: string) => Buffer.from(s).toString('base64');
const b64url = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

/** Authorization and X-Api-Key values that are wrong in every way but the obvious one. */
export const garbageCredentials = fc.oneof(
  fc.record({ authorization: fc.oneof(headerValue, fc.constantFrom('Bearer', 'Bearer ', 'Bearer a.b.c', 'bearer x', 'Basic', 'Basic !!!', `Basic ${base64(':')}`, `Basic ${base64('a:b')}`, 'Digest x', `Bearer ${b64url({ alg: 'none', typ: 'JWT' })}.${b64url({ userId: 'x', accountId: 'y' })}.`, `Bearer ${b64url({ alg: 'HS256' })}.${b64url({ exp: 1 })}.AAAA`), headerValue.map((v) => `Bearer ${v}`)) }),
  fc.record({ 'x-api-key': fc.oneof(headerValue, fc.constantFrom('cl_', 'cl_live_x', 'x'.repeat(300), '%00')) }),
);

/** Headers around the request: forwarding, content negotiation, ids, encodings. */
export const oddHeaders = fc.record(
  {
    'x-forwarded-for': fc.oneof(headerValue, fc.constantFrom('1.2.3.4', '::1', '1.2.3.4, 5.6.7.8', ', ,', 'unknown', '999.999.999.999', '[::1]:80', 'fe80::1%eth0', '1.2.3.4'.repeat(500))),
    'x-request-id': headerValue,
    'idempotency-key': headerValue,
    accept: fc.constantFrom('*/*', 'text/html', 'application/xml', 'garbage', ''),
    'accept-encoding': fc.constantFrom('gzip', 'br', 'identity;q=0', 'x'),
    'content-encoding': fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'bogus'),
    'x-http-method-override': fc.constantFrom('DELETE', 'PUT'),
  },
  { requiredKeys: [] },
);

/** Content types a body may be labelled with, sane or not. */
export const contentType = fc.oneof(
  fc.constant('application/json'),
  fc.constantFrom('application/json; charset=utf-8', 'application/json; charset=utf-16', 'application/json; charset=bogus', 'text/plain', 'text/plain; charset=latin1', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', '*/*', 'application/', ';;', 'application/json;;;', 'APPLICATION/JSON'),
  headerValue,
);
