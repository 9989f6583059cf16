/**
 * What a commit notification says: which store instance sent it (so a store ignores the echo of its
 * own, having woken its subscribers already) and the categories of the streams appended to, so a
 * subscriber to other streams is not woken to read nothing. A category is a stream id up to its
 * first '-' (`message-abc` → `message-`).
 */
const MAX_PAYLOAD = 7000; // NOTIFY payloads must stay under 8,000 bytes

export function categoryOf(streamId: string): string {
  const dash = streamId.indexOf('-');
  return dash < 0 ? streamId : streamId.slice(0, dash + 1);
}

/**
 * Whether a stream of one of `categories` may match one of `prefixes`. Never a false "no": a stream
 * that starts with a prefix has a category that starts with the prefix or is a prefix of it.
 * No categories (an unreadable notice) or no prefixes (a subscriber to everything) means yes.
 */
export function mayMatch(prefixes: string[] | undefined, categories: string[] | undefined): boolean {
  if (!prefixes?.length || !categories) return true;
  return categories.some((c) => prefixes.some((p) => c.startsWith(p) || p.startsWith(c)));
}

export function encodeNotice(instance: string, categories: Iterable<string>): string {
  const payload = `${instance} ${[...categories].join(' ')}`;
  return payload.length > MAX_PAYLOAD ? instance : payload;
}

/** `categories` undefined: the notice names none (too many to list, or another format): wake everyone. */
export function decodeNotice(payload: string): { instance?: string; categories?: string[] } {
  const [instance, ...categories] = payload.split(' ').filter(Boolean);
  return { instance, categories: categories.length ? categories : undefined };
}
