/**
 * A message's tags and metadata: what a sender attaches to find and group its messages later, and what
 * the provider receives alongside. The limits are the API's promise. A tag is kept to what a query
 * string and the providers' own tag rules carry unchanged; a metadata key may be any text (the
 * sender's own names, in any language), so what carries it (count labels, SES tags) copes with it.
 */
export const MAX_TAGS = 10;
export const TAG_PATTERN = /^[A-Za-z0-9_:-]{1,64}$/;
export const MAX_METADATA_KEYS = 20;
export const MAX_METADATA_KEY = 256;
export const MAX_METADATA_VALUE = 256;
/** The key the service itself puts in a provider's metadata to find a message again (Postmark's search). */
export const RESERVED_METADATA_KEY = 'msg_id';
/**
 * Assigning this key to a JavaScript object sets its prototype instead of adding an entry, so the
 * entry would vanish somewhere between the request and the provider: refused rather than lost.
 */
export const UNKEEPABLE_METADATA_KEY = '__proto__';

/** Why `key` cannot be a metadata key, or null when it can. */
export function metadataKeyProblem(key: string): string | null {
  if (key.length < 1 || key.length > MAX_METADATA_KEY) return `a metadata key is 1 to ${MAX_METADATA_KEY} characters`;
  if (key === RESERVED_METADATA_KEY) return `metadata key ${RESERVED_METADATA_KEY} is reserved`;
  if (key === UNKEEPABLE_METADATA_KEY) {
    return `metadata key ${UNKEEPABLE_METADATA_KEY} cannot be kept: it is not a plain object key in JavaScript (it names the object's prototype)`;
  }
  return null;
}

export type Tags = string[];
export type Metadata = Record<string, string>;
