/**
 * The dashboard's session tokens: issued at sign-in (and on sign-up), verified on every dashboard
 * request. One adapter (src/adapters/session/jwt.ts, signed JWTs).
 */
export interface SessionUser {
  userId: string;
  accountId: string;
  /** passwordStamp of the password the user signed in with: the token ends when it changes */
  passwordStamp: string;
}

export interface SessionTokens {
  issue(user: SessionUser): Promise<{ token: string; expiresAt: string }>;
  /** null for anything that is not a valid, unexpired token of this service */
  verify(token: string): Promise<SessionUser | null>;
}
