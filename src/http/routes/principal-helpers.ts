import type { Principal } from '../principal.js';

export const accountOf = (p: Principal | undefined): string => p!.accountId;

/** Recorded as the `actor` of the events a request causes. */
export const actorOf = (p: Principal | undefined): string =>
  !p ? 'anonymous' : p.kind === 'user' ? `user:${p.userId}` : `apikey:${p.apiKeyId}`;
