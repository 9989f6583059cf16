import { createHash } from 'node:crypto';

/**
 * A UUID (RFC 4122 version 5 layout) derived from the parts, so a retried command produces the same
 * event ids and the event store can recognise the retry. Parts are length-prefixed so ('ab','c') and
 * ('a','bc') differ.
 */
export function deterministicEventId(...parts: string[]): string {
  const hash = createHash('sha1');
  for (const p of parts) hash.update(`${Buffer.byteLength(p)}:${p};`);
  const b = hash.digest().subarray(0, 16);
  b[6] = (b[6] & 0x0f) | 0x50;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
