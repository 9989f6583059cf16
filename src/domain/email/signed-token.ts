import { createHmac, timingSafeEqual } from 'node:crypto';

/** HMAC-SHA256, base64url; verified in constant time. */
export function hmac(secret: string, ...parts: string[]): string {
  return createHmac('sha256', secret).update(parts.join('\n'), 'utf8').digest('base64url');
}

export function hmacMatches(secret: string, signature: string, ...parts: string[]): boolean {
  const expected = Buffer.from(hmac(secret, ...parts));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
