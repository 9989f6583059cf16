import type { Request } from 'express';
import type { Caller } from '../../commands/caller.js';
import { requestClientIp } from '../client-ip.js';
import type { Principal } from '../../domain/principal.js';

export const accountOf = (p: Principal | undefined): string => p!.accountId;

/** Recorded as the `actor` of the events a request causes. */
export const actorOf = (p: Principal | undefined): string =>
  !p ? 'anonymous' : p.kind === 'user' ? `user:${p.userId}` : `apikey:${p.apiKeyId}`;

/** Where a request comes from: the client address (X-Forwarded-For only from a trusted proxy) and its id. */
export const originOf = (req: Request): Omit<Caller, 'actor'> => ({
  clientIp: requestClientIp(req),
  requestId: typeof req.id === 'string' ? req.id : undefined,
});

/** The actor with where its request comes from, as the events it causes record them. */
export const callerOf = (p: Principal | undefined, req: Request): Caller => ({ actor: actorOf(p), ...originOf(req) });
