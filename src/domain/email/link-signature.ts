import { hmac, hmacMatches } from './signed-token.js';

/** The `/r/` redirect only goes to targets signed for that message: never an open redirect. */
export const signTrackedLink = (secret: string, messageId: string, target: string) => hmac(secret, 'click', messageId, target);

export const verifyTrackedLink = (secret: string, messageId: string, target: string, signature: string) =>
  hmacMatches(secret, signature, 'click', messageId, target);

/** The open pixel of a message is signed for it, so that only its recipient's mail client counts an open. */
export const signOpenPixel = (secret: string, messageId: string) => hmac(secret, 'open', messageId);

/**
 * Whether a visit of a message's open pixel counts as an open: its signature is the message's, or it
 * has none and the message's html carries the unsigned pixel that messages queued before pixels were
 * signed have (a signed pixel's URL goes on with `?s=`, an unsigned one ends at the id).
 */
export function openCounts(secret: string, messageId: string, signature: string | undefined, html: string | null): boolean {
  if (signature !== undefined) return hmacMatches(secret, signature, 'open', messageId);
  return html !== null && html.includes(`/o/${messageId}"`);
}
