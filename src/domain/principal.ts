/** Who is calling: an API key (limited to its own messages) or a dashboard user (account-wide). */
export type Scope = 'send' | 'sms:send' | 'read_events' | 'contacts:read' | 'contacts:write';
export const SCOPES: readonly Scope[] = ['send', 'sms:send', 'read_events', 'contacts:read', 'contacts:write'];

export type Principal =
  | { kind: 'apiKey'; accountId: string; apiKeyId: string; scopes: Scope[]; dailyLimit: number | null }
  | { kind: 'user'; accountId: string; userId: string };

/** The principal as the events it causes record it (`actor`), and as the audit trail reads it back. */
export const actorOf = (p: Principal | undefined): string =>
  !p ? 'anonymous' : p.kind === 'user' ? `user:${p.userId}` : `apikey:${p.apiKeyId}`;
