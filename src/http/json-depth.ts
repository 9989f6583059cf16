import { badRequest } from '../domain/errors.js';

/** How deeply arrays and objects may nest in a request body; no route takes more than a few levels. */
export const MAX_JSON_DEPTH = 64;
/**
 * How many object fields a request body may hold in all: the largest a route takes is an import of
 * 5,000 contacts of a few fields each. 780,000 one-character fields in 9 MB cost seconds of parsing
 * and checking, and a 35 MB answer naming each unknown one.
 */
export const MAX_JSON_FIELDS = 100_000;
const COLON = 0x3a;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/**
 * What makes JSON text too costly to parse: arrays and objects nested deeper than `limits.depth`, or
 * more than `limits.fields` object fields (a colon outside a string is one); null when neither. Found
 * by counting brackets and colons outside strings, without parsing (so it stops at the first one too
 * many, and no recursion is involved). Works on UTF-8 bytes as on a string: in UTF-8 these ASCII bytes
 * never occur inside a multi-byte character. On malformed JSON the answer may be wrong; the parser
 * refuses it anyway. `onString` is told where each string's content lies (between its quotes), up to
 * where the answer is known.
 */
export function jsonShapeProblem(
  text: Uint8Array | string,
  onString?: (start: number, end: number) => void,
  limits: { depth: number; fields: number } = { depth: MAX_JSON_DEPTH, fields: MAX_JSON_FIELDS },
): 'depth' | 'fields' | null {
  const bytes = typeof text !== 'string';
  const length = text.length;
  const at = bytes ? (i: number) => text[i] : (i: number) => text.charCodeAt(i);
  // A string is skipped to its closing quote with indexOf (native, where a loop over each character of a
  // megabyte of base64 attachment cost 6 ms a request): the first quote not escaped by an odd run of backslashes.
  const nextQuote = bytes ? (from: number) => (text as Uint8Array).indexOf(QUOTE, from) : (from: number) => (text as string).indexOf('"', from);
  let depth = 0;
  let fields = 0;
  for (let i = 0; i < length; i++) {
    const c = at(i);
    if (c === QUOTE) {
      const start = i + 1;
      for (;;) {
        i = nextQuote(i + 1);
        if (i < 0) return null;
        let backslashes = 0;
        while (at(i - 1 - backslashes) === BACKSLASH) backslashes++;
        if (backslashes % 2 === 0) break;
      }
      onString?.(start, i);
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > limits.depth) return 'depth';
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
    else if (c === COLON && ++fields > limits.fields) return 'fields';
  }
  return null;
}

export const tooDeep = (where: string) => badRequest(`${where} is nested deeper than ${MAX_JSON_DEPTH} levels`);

/** The 400 for JSON text of a shape too costly to parse (see jsonShapeProblem). */
export const shapeRefusal = (where: string, problem: 'depth' | 'fields') =>
  problem === 'depth' ? tooDeep(where) : badRequest(`${where} has more than ${MAX_JSON_FIELDS.toLocaleString('en-US')} fields`);

/** JSON.parse of text from outside, refusing (400) text nested deeper than the limit, or of too many fields. */
export function parseJsonText(text: string, where: string): unknown {
  const problem = jsonShapeProblem(text);
  if (problem) throw shapeRefusal(where, problem);
  return JSON.parse(text);
}
