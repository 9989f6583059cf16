import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_TOLERANCE_SECONDS = 300;

/**
 * docs/webhooks.md: `v1=` + base64(HMAC-SHA256(timestamp + "." + raw body)), keyed with the subscription's
 * secret string exactly as the API shows it, i.e. its UTF-8 bytes, never a decoded form.
 */
export function signWebhookPayload(secret: string, timestamp: number, rawBody: string): string {
  const digest = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${timestamp}.${rawBody}`, 'utf8').digest('base64');
  return `v1=${digest}`;
}

/**
 * What a receiver does with X-Service-Timestamp and X-Service-Signature: refuse a timestamp more than
 * `toleranceSeconds` from `now` (a replayed old request), then compare in constant time. The header
 * may carry several space-separated signatures (say, during a secret rotation); one match is enough.
 */
export function verifyWebhookSignature(
  secret: string,
  timestamp: string | number,
  rawBody: string,
  header: string | undefined,
  options: { now: Date; toleranceSeconds?: number },
): boolean {
  const ts = typeof timestamp === 'number' ? timestamp : /^\d{1,15}$/.test(timestamp.trim()) ? Number(timestamp.trim()) : NaN;
  if (!Number.isSafeInteger(ts) || !header) return false;
  const tolerance = options.toleranceSeconds ?? SIGNATURE_TOLERANCE_SECONDS;
  if (Math.abs(options.now.getTime() / 1000 - ts) > tolerance) return false;
  const expected = Buffer.from(signWebhookPayload(secret, ts, rawBody), 'utf8');
  let matched = false;
  for (const candidate of header.trim().split(/\s+/)) {
    const given = Buffer.from(candidate, 'utf8');
    // every candidate is compared (no early exit), so timing reveals nothing about which one matched
    if (given.length === expected.length && timingSafeEqual(given, expected)) matched = true;
  }
  return matched;
}
