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
