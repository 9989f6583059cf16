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
/** Names a client may use for a tag list or a metadata object (qs and axios write `tag[]`, `tag[0]`, `metadata.key`). */
const TAG_LIST_PARAM = /^tag[[.]/;
const LOOSE_METADATA_PARAM = /^metadata($|[[.])/;

export const TAG_LIST_FORM = 'several tags are sent as tag repeated, without brackets: tag=a&tag=b';
export const METADATA_FORM = 'a metadata filter is sent as metadata[<key>]=<value>, its key in the brackets';

/**
 * The `metadata[key]=value` filters of a query string, and the problems of its label parameters by
 * name. The app's query parser is the simple one, so such a parameter arrives under its literal name
 * `metadata[key]` (percent-decoded); each is checked like a stored key and value. A repeated one (an
 * array) is refused: one key matches one value. A tag list or metadata in another form is refused
 * rather than ignored, since the query would then answer for every message.
 */
function readLabelParams(query: Record<string, unknown>) {
  const metadata: Record<string, string> = {};
  const problems: [string, string][] = [];
  for (const [name, value] of Object.entries(query)) {
    const m = METADATA_PARAM.exec(name);
    if (m && m[1] !== '') {
      const problem = metadataKeyProblem(m[1]);
      const v = metadataValueSchema.safeParse(value);
      if (problem) problems.push([name, problem]);
      else if (!v.success) problems.push([name, typeof value === 'string' ? v.error.issues[0].message : 'give one value per metadata key']);
      else metadata[m[1]] = v.data;
    } else if (LOOSE_METADATA_PARAM.test(name)) problems.push([name, METADATA_FORM]);
    else if (TAG_LIST_PARAM.test(name)) problems.push([name, TAG_LIST_FORM]);
  }
  if (Object.keys(metadata).length > MAX_METADATA_KEYS) problems.push(['metadata', `filter on at most ${MAX_METADATA_KEYS} metadata keys`]);
  return { metadata, problems };
}

/** The fields the label filters replace: `tag` becomes `tags`, the `metadata[key]` family `metadata`. */
type Labelled<T> = Omit<T, 'tag' | 'metadata[key]'> & { tags?: string[]; metadata: Record<string, string> };

/**
 * A query of messages with the `tag` and `metadata[key]` filters: parsed into `tags` and `metadata`,
 * their problems listed with the query's others in one answer.
 */
export function withLabelFilters<T extends z.ZodRawShape>(query: z.ZodObject<T>) {
  const named = Object.keys(query.shape).filter((name) => name !== 'tag' && name !== 'metadata[key]');
  return (
    query
      // the label parameters are read by their raw names, which the object would strip
      .loose()
      .superRefine(
        (q, ctx) => {
          for (const [name, message] of readLabelParams(q).problems) ctx.addIssue({ code: 'custom', path: [name], message });
        },
        // checked also when another parameter is wrong, so that one answer lists every problem
        { when: (payload) => typeof payload.value === 'object' && payload.value !== null },
      )
      .transform((q) => {
        const tag = q.tag as string | string[] | undefined;
        const tags = tag === undefined ? undefined : typeof tag === 'string' ? [tag] : tag;
        const fields = Object.fromEntries(named.filter((name) => q[name] !== undefined).map((name) => [name, q[name]]));
        return { ...fields, tags, metadata: readLabelParams(q).metadata } as Labelled<z.output<z.ZodObject<T>>>;
      })
  );
}
