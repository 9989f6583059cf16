/**
 * A message's tags and metadata: what a sender attaches to find and group its messages later, and what
 * the provider receives alongside. The limits are the API's promise; the characters are kept to what a
 * query string, a JSON containment filter and the providers' own tag rules all carry unchanged.
 */
export const MAX_TAGS = 10;
export const TAG_PATTERN = /^[A-Za-z0-9_:-]{1,64}$/;
export const MAX_METADATA_KEYS = 20;
export const METADATA_KEY_PATTERN = /^[A-Za-z0-9_.:-]{1,256}$/;
export const MAX_METADATA_VALUE = 256;
/** The key the service itself puts in a provider's metadata to find a message again (Postmark's search). */
export const RESERVED_METADATA_KEY = 'msg_id';

export type Tags = string[];
export type Metadata = Record<string, string>;
