import { hmac, hmacMatches } from './signed-token.js';

/** The `/r/` redirect only goes to targets signed for that message: never an open redirect. */
export const signTrackedLink = (secret: string, messageId: string, target: string) => hmac(secret, 'click', messageId, target);

export const verifyTrackedLink = (secret: string, messageId: string, target: string, signature: string) =>
  hmacMatches(secret, signature, 'click', messageId, target);
