import type { Request } from 'express';
import { causeOf, type Caller, type Cause, type Origin } from '../../commands/caller.js';
import { requestClientIp } from '../client-ip.js';
import { actorOf, type Principal } from '../../domain/principal.js';

export const accountOf = (p: Principal | undefined): string => p!.accountId;

/** Where a request comes from: the client address (X-Forwarded-For only from a trusted proxy) and its id. */
export const originOf = (req: Request): Origin => ({
  clientIp: requestClientIp(req),
  requestId: typeof req.id === 'string' ? req.id : undefined,
});

/** The actor with where its request comes from, as the events it causes record them. */
export const callerOf = (p: Principal | undefined, req: Request): Caller => ({ actor: actorOf(p), ...originOf(req) });

/** What a request causes, before it is known who sent it (a send's key is checked with its facts). */
export const causeOfRequest = (req: Request): Cause => causeOf(originOf(req));
