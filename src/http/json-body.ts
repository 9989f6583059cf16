import express, { type NextFunction, type Request, type Response } from 'express';
import { isAscii } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { jsonShapeProblem, shapeRefusal } from './json-depth.js';

/**
 * A string at least this long (an attachment's base64, a large body) is taken from the request's bytes
 * as it is, when its bytes are already its characters: decoding a 1.4 MB body as UTF-8 and having
 * JSON.parse scan and copy it held the event loop about 18 ms a request here, which every other
 * request arriving meanwhile waited out.
 */
const LONG_STRING = 64 * 1024;
const BACKSLASH = 0x5c;
const CONTROL = /[\u0000-\u001f]/;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** The errors body-parser raises, which src/http/error-mapping.ts answers (400 malformed JSON, 415). */
const failure = (type: 'entity.parse.failed' | 'charset.unsupported' | 'encoding.unsupported', status: number) =>
  Object.assign(new Error(type), { type, status, expose: true });

/** Whether the string whose closing quote is at `quote` is an object's key: a colon follows it. */
function isKey(bytes: Buffer, quote: number): boolean {
  let i = quote + 1;
  while (i < bytes.length && (bytes[i] === 0x20 || bytes[i] === 0x09 || bytes[i] === 0x0a || bytes[i] === 0x0d)) i++;
  return bytes[i] === 0x3a;
}

function charsetOf(req: Request): string | undefined {
  return /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(req.get('content-type') ?? '')?.[1]?.toLowerCase();
}

function parse(text: string, reviver?: (key: string, value: unknown) => unknown): unknown {
  try {
    return JSON.parse(text, reviver as never);
  } catch {
    throw failure('entity.parse.failed', 400);
  }
}

/**
 * A JSON body as `express.json({ strict: false })` parses it (any JSON value, an empty body as `{}`, a
 * UTF-8 byte-order mark skipped, a charset other than UTF-8 decoded, none outside UTF refused), nested at
 * most MAX_JSON_DEPTH levels (checked on the bytes, before parsing). Each long string whose bytes are
 * printable ASCII without escapes is cut out of the text before it is decoded and parsed, and put back
 * in its place as a string made straight from those bytes: the same value, without the two passes.
 */
export function parseJsonBody(body: Buffer, charset?: string): unknown {
  if (body.length === 0) return {};
  if (charset && !/^utf-?8$/.test(charset)) {
    if (!charset.startsWith('utf-')) throw failure('charset.unsupported', 415);
    let text: string;
    try {
      text = new TextDecoder(charset).decode(body);
    } catch {
      throw failure('encoding.unsupported', 415);
    }
    const problem = jsonShapeProblem(text);
    if (problem) throw shapeRefusal('request body', problem);
    return parse(text);
  }
  const bytes = body.subarray(0, 3).equals(BOM) ? body.subarray(3) : body;
  const long: [number, number][] = [];
  const problem = jsonShapeProblem(bytes, (start, end) => {
    if (end - start >= LONG_STRING) long.push([start, end]);
  });
  if (problem) throw shapeRefusal('request body', problem);
  if (long.length === 0) return parse(bytes.toString('utf8'));
  const strings: string[] = [];
  const pieces: Buffer[] = [];
  const marker = `\\u0000${randomUUID()}:`;
  let from = 0;
  for (const [start, end] of long) {
    const content = bytes.subarray(start, end);
    if (content.indexOf(BACKSLASH) >= 0 || !isAscii(content)) continue;
    if (isKey(bytes, end)) continue; // a key is compared as the parser gives it
    const string = content.toString('latin1');
    if (CONTROL.test(string)) continue; // not valid inside a JSON string: the parser refuses the body
    pieces.push(bytes.subarray(from, start), Buffer.from(`${marker}${strings.length}`));
    strings.push(string);
    from = end;
  }
  if (strings.length === 0) return parse(bytes.toString('utf8'));
  pieces.push(bytes.subarray(from));
  const placeholder = JSON.parse(`"${marker}"`) as string;
  return parse(Buffer.concat(pieces).toString('utf8'), (_key, value) =>
    typeof value === 'string' && value.startsWith(placeholder) ? strings[Number(value.slice(placeholder.length))] : value,
  );
}

/** Express middleware: the raw body read as express.json reads it (size limit, gzip), then parsed as above. */
export function jsonBodyParser(limit: string) {
  const raw = express.raw({ limit, type: () => true });
  return (req: Request, res: Response, next: NextFunction) => {
    raw(req, res, (err?: unknown) => {
      if (err) return next(err);
      if (!Buffer.isBuffer(req.body)) return next();
      try {
        req.body = parseJsonBody(req.body, charsetOf(req));
      } catch (parseError) {
        req.body = undefined;
        return next(parseError);
      }
      next();
    });
  };
}
