/**
 * The dashboard's session tokens: issued at sign-in (and on sign-up), verified on every dashboard
 * request. One adapter (src/adapters/session/jwt.ts, signed JWTs).
 */
export interface SessionUser {
  userId: string;
  accountId: string;
  /** passwordStamp of the password the user signed in with: the token ends when it changes */
  passwordStamp: string;
  /** the sign-in this token is of, which a sign-out ends (absent on tokens issued before sign-outs were recorded) */
  sessionId?: string;
  /** when the token expires (verify only) */
  expiresAt?: string;
}

export interface SessionTokens {
  /** a token of a new session (a sessionId of its own) */
  issue(user: Omit<SessionUser, 'sessionId' | 'expiresAt'>): Promise<{ token: string; expiresAt: string }>;
  /** null for anything that is not a valid, unexpired token of this service */
  verify(token: string): Promise<SessionUser | null>;
}
