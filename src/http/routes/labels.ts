import { z } from 'zod';
import {
  MAX_METADATA_KEYS,
  MAX_METADATA_VALUE,
  MAX_TAGS,
  METADATA_KEY_PATTERN,
  RESERVED_METADATA_KEY,
  TAG_PATTERN,
} from '../../domain/messages/labels.js';

export const tagSchema = z.string().regex(TAG_PATTERN, 'a tag is 1 to 64 characters of A-Z a-z 0-9 _ : -');
export const tagsSchema = z.array(tagSchema).max(MAX_TAGS, `tags holds at most ${MAX_TAGS} tags`);

const metadataKey = z
  .string()
  .regex(METADATA_KEY_PATTERN, 'a metadata key is 1 to 256 characters of A-Z a-z 0-9 _ . : -')
  .refine((k) => k !== RESERVED_METADATA_KEY, `metadata key ${RESERVED_METADATA_KEY} is reserved`);
export const metadataValueSchema = z.string().max(MAX_METADATA_VALUE, `a metadata value is at most ${MAX_METADATA_VALUE} characters`);
// Keys are checked here rather than by the record's key schema, which would answer only "Invalid key in record".
export const metadataSchema = z.record(z.string(), metadataValueSchema).superRefine((m, ctx) => {
  const keys = Object.keys(m);
  if (keys.length > MAX_METADATA_KEYS) ctx.addIssue({ code: 'custom', path: [], message: `metadata holds at most ${MAX_METADATA_KEYS} keys` });
  for (const key of keys) {
    const checked = metadataKey.safeParse(key);
    if (!checked.success) ctx.addIssue({ code: 'custom', path: [key], message: checked.error.issues[0].message });
  }
});

const METADATA_PARAM = /^metadata\[(.*)\]$/;

/**
 * `metadata[key]=value` filters of a query string. The app's query parser is the simple one, so such a
 * parameter arrives under its literal name `metadata[key]`; each is checked like a stored key and value.
 * A repeated parameter (an array) is refused: one key matches one value.
 */
export const metadataFilterSchema = z
  .record(z.string(), z.unknown())
  .transform((query, ctx) => {
    const filter: Record<string, string> = {};
    for (const [name, value] of Object.entries(query)) {
      const m = METADATA_PARAM.exec(name);
      if (!m) continue;
      const key = metadataKey.safeParse(m[1]);
      const v = metadataValueSchema.safeParse(value);
      if (!key.success) ctx.addIssue({ code: 'custom', path: [name], message: key.error.issues[0].message });
      else if (!v.success) ctx.addIssue({ code: 'custom', path: [name], message: typeof value === 'string' ? v.error.issues[0].message : 'give one value per metadata key' });
      else filter[m[1]] = v.data;
    }
    if (Object.keys(filter).length > MAX_METADATA_KEYS) {
      ctx.addIssue({ code: 'custom', path: ['metadata'], message: `filter on at most ${MAX_METADATA_KEYS} metadata keys` });
    }
    return filter;
  });
