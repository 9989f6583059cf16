import { createId } from '../../cuid.js';
import { signWebhookPayload } from '../../domain/webhooks/signature.js';

export interface SignedRequest {
  headers: Record<string, string>;
  body: string;
}

/** The delivery headers (docs/webhooks.md), signed now: every attempt is re-timestamped and re-signed. */
export function signedRequest(secret: string, event: string, body: string, attempt: number, now = new Date()): SignedRequest {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-service-event': event,
      'x-service-delivery': createId(),
      'x-service-timestamp': String(timestamp),
      'x-service-signature': signWebhookPayload(secret, timestamp, body),
      'x-service-attempt': String(attempt),
    },
  };
}
