// The README receiver's guide, verbatim but for the type annotations: tested against real deliveries.
import { createHmac, timingSafeEqual } from 'node:crypto';
const seen = new Set<string>(); // a table with a unique key in production
export function verifyWebhook(secret: string, headers: Record<string, any>, rawBody: string) {
  const ts = headers['x-service-timestamp'], sig = Buffer.from(headers['x-service-signature'] ?? '');
  if (!/^\d+$/.test(ts ?? '') || Math.abs(Date.now() / 1000 - Number(ts)) > 300) return 'stale';
  const want = Buffer.from('v1=' + createHmac('sha256', secret).update(`${ts}.${rawBody}`).digest('base64'));
  if (sig.length !== want.length || !timingSafeEqual(sig, want)) return 'bad signature';
  const { id } = JSON.parse(rawBody);
  if (seen.has(id)) return 'duplicate'; seen.add(id); return 'ok';
}
