/** Who is calling: an API key (limited to its own messages) or a dashboard user (account-wide). */
export type Scope = 'send' | 'sms:send' | 'read_events' | 'contacts:read' | 'contacts:write';
export const SCOPES: readonly Scope[] = ['send', 'sms:send', 'read_events', 'contacts:read', 'contacts:write'];

export type Principal =
  | { kind: 'apiKey'; accountId: string; apiKeyId: string; scopes: Scope[]; dailyLimit: number | null }
  | { kind: 'user'; accountId: string; userId: string };

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
