import { z } from 'zod';
import { MAX_METADATA_KEY, MAX_METADATA_KEYS, MAX_METADATA_VALUE, MAX_TAGS, metadataKeyProblem, TAG_PATTERN } from '../../domain/messages/labels.js';

export const tagSchema = z.string().regex(TAG_PATTERN, 'a tag is 1 to 64 characters of A-Z a-z 0-9 _ : -');
export const tagsSchema = z.array(tagSchema).max(MAX_TAGS, `tags holds at most ${MAX_TAGS} tags`);

/**
 * A `tag` query filter: one tag, or the parameter repeated for several (messages carrying every one).
 * The limit is checked outside the union: a union whose every branch fails answers only "Invalid input".
 */
export const tagFilterSchema = z
  .union([tagSchema, z.array(tagSchema).meta({ maxItems: MAX_TAGS })])
  .refine((tags) => typeof tags === 'string' || tags.length <= MAX_TAGS, `filter on at most ${MAX_TAGS} tags`);

export const metadataValueSchema = z.string().max(MAX_METADATA_VALUE, `a metadata value is at most ${MAX_METADATA_VALUE} characters`);

/**
 * Keys are checked on the object as received: zod's record drops a `__proto__` key without a word, and
 * its key schema would answer only "Invalid key in record".
 */
export const metadataSchema = z
  .preprocess(
    (raw, ctx) => {
      if (raw && typeof raw === 'object' && !Array.isArray(raw)) {
        for (const key of Object.keys(raw)) {
          const problem = metadataKeyProblem(key);
          if (problem) ctx.addIssue({ code: 'custom', path: [key], message: problem });
        }
      }
      return raw;
    },
    z.record(z.string(), metadataValueSchema).refine((m) => Object.keys(m).length <= MAX_METADATA_KEYS, `metadata holds at most ${MAX_METADATA_KEYS} keys`),
  )
  .meta({
    description: `At most ${MAX_METADATA_KEYS} entries; a key is any text of 1 to ${MAX_METADATA_KEY} characters but \`msg_id\` (the service's own) and \`__proto__\` (not a plain object key in JavaScript), a value a string of at most ${MAX_METADATA_VALUE} characters. Filter with \`metadata[<key>]=<value>\` (URL-encoded).`,
  });

const METADATA_PARAM = /^metadata\[(.*)\]$/;

/**
 * `metadata[key]=value` filters of a query string. The app's query parser is the simple one, so such a
 * parameter arrives under its literal name `metadata[key]` (percent-decoded); each is checked like a
 * stored key and value. A repeated parameter (an array) is refused: one key matches one value.
 */
export const metadataFilterSchema = z
  .record(z.string(), z.unknown())
  .transform((query, ctx) => {
    const filter: Record<string, string> = {};
    for (const [name, value] of Object.entries(query)) {
      const m = METADATA_PARAM.exec(name);
      if (!m) continue;
      const problem = metadataKeyProblem(m[1]);
      const v = metadataValueSchema.safeParse(value);
      if (problem) ctx.addIssue({ code: 'custom', path: [name], message: problem });
      else if (!v.success) ctx.addIssue({ code: 'custom', path: [name], message: typeof value === 'string' ? v.error.issues[0].message : 'give one value per metadata key' });
      else filter[m[1]] = v.data;
    }
    if (Object.keys(filter).length > MAX_METADATA_KEYS) {
      ctx.addIssue({ code: 'custom', path: ['metadata'], message: `filter on at most ${MAX_METADATA_KEYS} metadata keys` });
    }
    return filter;
  });
