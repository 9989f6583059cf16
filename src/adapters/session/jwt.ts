import { randomUUID } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';
import type { SessionTokens, SessionUser } from '../../ports/session-tokens.js';

const TTL_SECONDS = 12 * 3600;

/** Dashboard tokens: HS256, subject = user id, `acc` = account id, `pst` = the stamp of the password it was issued under (not the password), `jti` = the session. */
export function createJwtIssuer(secret: string): SessionTokens {
  const key = new TextEncoder().encode(secret);
  return {
    async issue(user) {
      const expiresAt = new Date(Date.now() + TTL_SECONDS * 1000);
      const token = await new SignJWT({ acc: user.accountId, pst: user.passwordStamp })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(user.userId)
        .setJti(randomUUID())
        .setIssuedAt()
        .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
        .sign(key);
      return { token, expiresAt: expiresAt.toISOString() };
    },
    async verify(token): Promise<SessionUser | null> {
      try {
        const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'] });
        // a token without a stamp was issued before sessions ended with the password: signed in again
        if (typeof payload.sub !== 'string' || typeof payload.acc !== 'string' || typeof payload.pst !== 'string') return null;
        return {
          userId: payload.sub,
          accountId: payload.acc,
          passwordStamp: payload.pst,
          ...(typeof payload.jti === 'string' ? { sessionId: payload.jti } : {}),
          ...(typeof payload.exp === 'number' ? { expiresAt: new Date(payload.exp * 1000).toISOString() } : {}),
        };
      } catch {
        return null;
      }
    },
  };
}
