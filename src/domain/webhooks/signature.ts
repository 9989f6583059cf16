import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * SPEC.md §6: `v1=` + base64(HMAC-SHA256(timestamp + "." + raw body)), keyed with the subscription's
 * secret string exactly as the API shows it (its UTF-8 bytes).
 */
export function signWebhookPayload(secret: string, timestamp: number, rawBody: string): string {
  return `v1=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${timestamp}.${rawBody}`, 'utf8').digest('base64')}`;
}

/** What a receiver does: constant-time compare, and refuse timestamps more than `toleranceSeconds` away. */
export function verifyWebhookSignature(
  secret: string,
  timestamp: string | number,
  rawBody: string,
  header: string,
  options: { now: Date; toleranceSeconds?: number },
): boolean {
  const ts = Number(timestamp);
  if (!Number.isInteger(ts)) return false;
  if (Math.abs(options.now.getTime() / 1000 - ts) > (options.toleranceSeconds ?? 300)) return false;
  const expected = Buffer.from(signWebhookPayload(secret, ts, rawBody));
  const given = Buffer.from(header);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
