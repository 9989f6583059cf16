import type { Scope } from '../domain/principal.js';

/** The authentication a route requires. */
export type RouteAuth =
  | { kind: 'public' }
  | { kind: 'jwt' }
  /**
   * An API key with the scope. `inHandler`: the handler checks the key in its own statement (the send
   * API's admission) with the key the context presents; a request that fails validation first has its
   * key checked on its own, so a bad key is still answered 401/403 before any 400.
   */
  | { kind: 'apiKey'; scope: Scope; inHandler?: boolean }
  /** API key with the scope, or a dashboard JWT (the messages endpoints) */
  | { kind: 'apiKeyOrJwt'; scope: Scope };

/**
 * The words a refused credential is answered with: src/http/auth.ts throws them and /openapi.json lists
 * them, so the reference says what a client will read.
 */
export const AUTH_REFUSALS = {
  noSession: 'missing or invalid dashboard token',
  passwordChanged: 'this session ended when the password was changed: sign in again',
  signedOut: 'this session was signed out: sign in again',
  keyOnDashboardRoute: 'API keys cannot call admin endpoints; use a dashboard token',
  invalidKey: 'invalid API key',
  expiredKey: 'API key expired',
  keyAddressDenied: 'API key denied for this client IP',
  missingScope: (scope: Scope) => `API key is missing required scope: ${scope}`,
} as const;
