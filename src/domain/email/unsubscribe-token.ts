import { hmac, hmacMatches } from './signed-token.js';

/** `<messageId>.<mac>`: unforgeable, URL-safe, and it names the message (whose stream knows the recipient). */
export function createUnsubscribeToken(secret: string, messageId: string): string {
  return `${messageId}.${hmac(secret, 'unsubscribe', messageId)}`;
}

/** The message id, or null for a token we did not make. */
export function readUnsubscribeToken(secret: string, token: string): string | null {
  const dot = token.lastIndexOf('.');
  if (dot <= 0) return null;
  const messageId = token.slice(0, dot);
  if (!/^[a-z0-9]{1,64}$/i.test(messageId)) return null;
  return hmacMatches(secret, token.slice(dot + 1), 'unsubscribe', messageId) ? messageId : null;
}
