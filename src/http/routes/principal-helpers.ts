import type { Request } from 'express';
import type { Caller } from '../../commands/caller.js';
import { requestClientIp } from '../client-ip.js';
import type { Principal } from '../principal.js';

export const accountOf = (p: Principal | undefined): string => p!.accountId;

/** Recorded as the `actor` of the events a request causes. */
export const actorOf = (p: Principal | undefined): string =>
  !p ? 'anonymous' : p.kind === 'user' ? `user:${p.userId}` : `apikey:${p.apiKeyId}`;

/** The actor with the client address (X-Forwarded-For only from a trusted proxy) and the request id. */
export const callerOf = (p: Principal | undefined, req: Request): Caller => ({
  actor: actorOf(p),
  clientIp: requestClientIp(req),
  requestId: typeof req.id === 'string' ? req.id : undefined,
});
