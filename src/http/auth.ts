import type { Request } from 'express';
import type { Db } from '../adapters/db/knex.js';
import { hashApiKey, type PresentedKey } from '../commands/api-keys.js';
import { keysByHash, recordKeyUsed, storedKey, type CheckedKeyRow } from '../read-models/api-keys.js';
import { userCredentials } from '../read-models/accounts.js';
import { sessionStands } from '../domain/accounts/password.js';
import { keyRefusal, type KeyRefusal } from '../domain/accounts/key-check.js';
import { forbidden, unauthorized, type AppError } from '../domain/errors.js';
import type { SessionTokens } from '../ports/session-tokens.js';
import type { KeyFailureThrottle } from '../commands/key-failure-throttle.js';
import { createGroupCommit } from '../group-commit.js';
import type { Authenticate } from './app.js';
import { requestClientIp } from './client-ip.js';
import type { Principal, Scope } from '../domain/principal.js';
import { checkCsrf, presentedSession, readCookie, SESSION_COOKIE } from './session.js';
import { AUTH_REFUSALS } from './principal.js';

const LAST_USED_RESOLUTION_MS = 60_000;

const refusals: Record<KeyRefusal, (scope: Scope) => AppError> = {
  invalid: () => unauthorized(AUTH_REFUSALS.invalidKey),
  expired: () => unauthorized(AUTH_REFUSALS.expiredKey),
  ip: () => unauthorized(AUTH_REFUSALS.keyAddressDenied),
  scope: (scope) => forbidden(AUTH_REFUSALS.missingScope(scope)),
};

export interface Authenticator {
  authenticate: Authenticate;
  /** The key a request presents for `scope` (401 when it presents none), for a statement that checks it. */
  presentKey(req: Request, scope: Scope): PresentedKey;
  /** The principal of a key such a statement accepted, or the spec's error for its refusal. */
  acceptKey(row: CheckedKeyRow, presented: PresentedKey): Principal;
  /** A presented key checked on its own (the lookup every other route makes). */
  checkKey(presented: PresentedKey): Promise<Principal>;
  /** What a request's error is answered with: a refused key counts against its address, and past the limit is a 429. */
  screenError(err: unknown, req: Request): Promise<unknown>;
}

/**
 * API keys are looked up by the SHA-256 of the presented secret (one indexed read, no per-key loop,
 * nothing secret compared in JavaScript) on every request: no cache, so a revocation is seen by the very
 * next request in every process.
 */
export function createAuthenticator(deps: { db: Db; jwt: SessionTokens; now?: () => Date; keyFailures?: KeyFailureThrottle }): Authenticator {
  const now = deps.now ?? (() => new Date());
  const lastUsedWritten = new Map<string, number>();
  // The 401s of a key that was presented and refused (not of a missing key, nor a 403 for a scope).
  const keyRefusals = new WeakSet<AppError>();

  function touch(apiKeyId: string) {
    const t = Date.now();
    if ((lastUsedWritten.get(apiKeyId) ?? 0) > t - LAST_USED_RESOLUTION_MS) return;
    lastUsedWritten.set(apiKeyId, t);
    recordKeyUsed(deps.db, apiKeyId, new Date(t)).catch(() => lastUsedWritten.delete(apiKeyId));
  }

  // Requests arriving together look their keys up in one statement. A request never shares a lookup
  // that was already running when it arrived, so a revocation is still seen by the next request.
  const keyLookups = createGroupCommit<PresentedKey, CheckedKeyRow>((keys) => keysByHash(deps.db, keys.map((k) => k.hash)));

  function presentKey(req: Request, scope: Scope): PresentedKey {
    const secret = req.get('x-api-key');
    if (!secret) throw unauthorized(AUTH_REFUSALS.invalidKey);
    return { hash: hashApiKey(secret), clientIp: requestClientIp(req), scope, at: now() };
  }

  function acceptKey(row: CheckedKeyRow, presented: PresentedKey): Principal {
    const refused = keyRefusal(storedKey(row), presented);
    if (refused) {
      const refusal = refusals[refused](presented.scope);
      if (refusal.status === 401) keyRefusals.add(refusal);
      throw refusal;
    }
    touch(row.id!);
    return { kind: 'apiKey', accountId: row.account_id!, apiKeyId: row.id!, scopes: row.scopes!, dailyLimit: row.daily_limit };
  }

  async function checkKey(presented: PresentedKey): Promise<Principal> {
    return acceptKey(await keyLookups.add(presented), presented);
  }

  async function byJwt(req: Request): Promise<Principal> {
    // The dashboard's session cookie carries the same token; a request it authenticates must also
    // prove it comes from the dashboard's own pages.
    const session = presentedSession(req);
    if (!session) {
      if (req.get('x-api-key')) throw forbidden(AUTH_REFUSALS.keyOnDashboardRoute);
      throw unauthorized(AUTH_REFUSALS.noSession);
    }
    const user = await deps.jwt.verify(session.token);
    if (!user) throw unauthorized(AUTH_REFUSALS.noSession);
    // Read on every request, as keys are: a changed password or a sign-out ends sessions in every process at once.
    const credentials = await userCredentials(deps.db, user.userId, user.sessionId);
    if (!sessionStands(user.passwordStamp, credentials?.passwordHash)) {
      throw unauthorized(AUTH_REFUSALS.passwordChanged);
    }
    if (credentials?.signedOut) throw unauthorized(AUTH_REFUSALS.signedOut);
    if (session.cookie) checkCsrf(req);
    return { kind: 'user', accountId: user.accountId, userId: user.userId };
  }

  async function screenError(err: unknown, req: Request): Promise<unknown> {
    if (!deps.keyFailures || !keyRefusals.has(err as AppError)) return err;
    return deps.keyFailures.refused(requestClientIp(req), err as AppError);
  }

  return {
    presentKey,
    acceptKey,
    checkKey,
    screenError,
    async authenticate(req, auth) {
      switch (auth.kind) {
        case 'public':
          return undefined;
        case 'jwt':
          return byJwt(req);
        case 'apiKey':
          return checkKey(presentKey(req, auth.scope));
        case 'apiKeyOrJwt':
          return (req.get('authorization') || readCookie(req, SESSION_COOKIE)) && !req.get('x-api-key') ? byJwt(req) : checkKey(presentKey(req, auth.scope));
      }
    },
  };
}
