/**
 * A piece of JSON text spliced verbatim into a generated body: what `JSON.stringify` cannot write
 * (`1e999`, `-0`, a 30-digit integer, a nesting deeper than any recursive serialiser survives), or a
 * deliberately broken fragment. `tag` names its hostile class, so a failure can be told apart.
 */
export class RawJson {
  constructor(
    readonly text: string,
    readonly tag: string,
  ) {}
}

/** JSON text of a generated value; RawJson pieces go in as they are. */
export function toJsonText(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(toJsonText).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${toJsonText(v)}`)
      .join(',')}}`;
  }
  // JSON.stringify writes a lone surrogate as a \udXXX escape, so it reaches the server's JSON.parse intact.
  return JSON.stringify(value) ?? 'null';
}

// With the u flag a well-formed surrogate pair is one code point, so only a lone surrogate is category Cs.
const LONE_SURROGATE = /\p{Cs}/u;

/** The hostile classes present in a generated value: RawJson tags and lone surrogates in strings and keys. */
export function tagsOf(value: unknown, into = new Set<string>()): Set<string> {
  if (value instanceof RawJson) into.add(value.tag);
  else if (typeof value === 'string') {
    if (LONE_SURROGATE.test(value)) into.add('lone-surrogate');
  } else if (Array.isArray(value)) value.forEach((v) => tagsOf(v, into));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      tagsOf(k, into);
      tagsOf(v, into);
    }
  }
  return into;
}
