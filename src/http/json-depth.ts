import { badRequest } from '../domain/errors.js';

/** How deeply arrays and objects may nest in a request body; no route takes more than a few levels. */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/**
 * Whether JSON text opens more than `max` arrays/objects inside one another, found by counting
 * brackets outside strings, without parsing (so it stops at the first bracket too many, and no
 * recursion is involved). Works on UTF-8 bytes as on a string: in UTF-8 these ASCII bytes never occur
 * inside a multi-byte character. On malformed JSON the answer may be wrong; the parser refuses it anyway.
 * `onString` is told where each string's content lies (between its quotes), up to where the answer is known.
 */
export function jsonDepthExceeds(text: Uint8Array | string, max = MAX_JSON_DEPTH, onString?: (start: number, end: number) => void): boolean {
  const bytes = typeof text !== 'string';
  const length = text.length;
  const at = bytes ? (i: number) => text[i] : (i: number) => text.charCodeAt(i);
  // A string is skipped to its closing quote with indexOf (native, where a loop over each character of a
  // megabyte of base64 attachment cost 6 ms a request): the first quote not escaped by an odd run of backslashes.
  const nextQuote = bytes ? (from: number) => (text as Uint8Array).indexOf(QUOTE, from) : (from: number) => (text as string).indexOf('"', from);
  let depth = 0;
  for (let i = 0; i < length; i++) {
    const c = at(i);
    if (c === QUOTE) {
      const start = i + 1;
      for (;;) {
        i = nextQuote(i + 1);
        if (i < 0) return false;
        let backslashes = 0;
        while (at(i - 1 - backslashes) === BACKSLASH) backslashes++;
        if (backslashes % 2 === 0) break;
      }
      onString?.(start, i);
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
  }
  return false;
}

export const tooDeep = (where: string) => badRequest(`${where} is nested deeper than ${MAX_JSON_DEPTH} levels`);

/** JSON.parse of text from outside, refusing (400) text nested deeper than the limit. */
export function parseJsonText(text: string, where: string): unknown {
  if (jsonDepthExceeds(text)) throw tooDeep(where);
  return JSON.parse(text);
}
