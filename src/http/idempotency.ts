import { createHash } from 'node:crypto';
import type { Request } from 'express';
import type { HeldClaim, IdempotentRequests } from '../commands/idempotency.js';
import { badRequest } from '../domain/errors.js';
import { canonicalJson } from '../domain/idempotency/canonical-json.js';
import { accountScope, CLAIM_LEASE_MS, CLAIM_RENEWAL_MS, CLAIM_RENEWED_FOR_MS, keyScope, messageIdFor } from '../domain/idempotency/record.js';
import { mapError } from './error-mapping.js';
import type { Principal } from '../domain/principal.js';
import type { RouteResult } from './route.js';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** The request's Idempotency-Key, undefined without one; a 400 for one that is empty or too long. */
export function idempotencyKeyOf(req: Request): string | undefined {
  const key = req.get(IDEMPOTENCY_HEADER);
  if (key === undefined) return undefined;
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw badRequest(`${IDEMPOTENCY_HEADER} must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`);
  }
  return key;
}

/**
 * What a request is, for "the same request again": its route and its JSON body in canonical form
 * (RFC 8785: key order and number spelling do not matter), hashed. The route is in it so that a key
 * reused on another endpoint is a different request, not a replay of the first. It never throws,
 * whatever JSON was parsed (a number parsed as Infinity included): a body a schema should have
 * refused and let through is answered as the route answers it, not with a 500.
 */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256').update(`${method.toUpperCase()} ${path}\n${canonicalJson(body ?? null)}`).digest('hex');
}

/**
 * Whose keys these are: an API key's (by the hash every request with it presents, known before the key
 * is checked), or a dashboard user's account.
 */
export function callerScope(caller: { keyHash: string } | Principal): string {
  if ('keyHash' in caller) return keyScope(caller.keyHash);
  return accountScope(caller.accountId);
}

export interface IdempotentCall {
  scope: string;
  key: string;
  fingerprint: string;
  /** checks the caller's credentials when the route has not yet: a replay or a 409 is only for a caller still allowed in */
  verifyCaller(): Promise<unknown>;
  /** runs the route's handler with the ids its messages must have, and whether an earlier attempt may have queued them */
  handle(messageId: (index: number) => string, retaken: boolean): Promise<RouteResult>;
}

/**
 * Runs a request under its Idempotency-Key: the first claims the key, runs, and leaves its response for
 * the next (a success), or lets the key go (a refusal or a failure, which the client may retry).
 */
export function createIdempotencyGate(deps: { requests: IdempotentRequests; onError?: (err: unknown) => void }) {
  return async function run(call: IdempotentCall): Promise<RouteResult> {
    let claimed;
    try {
      claimed = await deps.requests.claim(call.scope, call.key, call.fingerprint);
    } catch (err) {
      await call.verifyCaller();
      throw err;
    }
    if (claimed.kind === 'replay') {
      await call.verifyCaller();
      return { status: claimed.response.status, body: claimed.response.body, headers: { [REPLAYED_HEADER]: 'true' } };
    }
    const { claim } = claimed;
    const lease = keepClaimed(claim);
    // Settled before the answer goes: a client retrying the moment it has its answer (or lost it) may
    // reach another API process, which knows only the record. A record that cannot be written does not
    // change the answer: the claim stays in flight until its lease ends, and the request that then
    // takes it over names the same messages, so queues none twice. The last renewal is let finish
    // first: written in one batch with the completion, one of the two would be refused.
    const settle = (response: { status: number; body: unknown }) =>
      lease
        .stop()
        .then(() => deps.requests.complete(claim, response))
        .catch((err: unknown) => deps.onError?.(err));
    let result: RouteResult;
    try {
      result = await call.handle((index) => messageIdFor(claim.seed, index), claimed.retaken);
    } catch (err) {
      await settle({ status: mapError(err).status, body: null });
      throw err;
    }
    await settle(result ? { status: result.status, body: result.body ?? null } : { status: 500, body: null });
    return result;
  };

  /**
   * Renews the claim's lease while its request runs, so that only a claim whose process died (or lost
   * the database) runs out and is taken over, or one still running after CLAIM_RENEWED_FOR_MS.
   * Renewals never overlap; stop() waits for the last.
   */
  function keepClaimed(claim: HeldClaim) {
    let renewing: Promise<void> = Promise.resolve();
    const until = Date.now() + CLAIM_RENEWED_FOR_MS;
    const timer = setInterval(() => {
      if (Date.now() > until) return clearInterval(timer);
      renewing = renewing
        .then(() => deps.requests.renew(claim))
        .then((held) => {
          if (!held) deps.onError?.(new Error(`the claim of an Idempotency-Key was taken over while its request ran (its lease of ${CLAIM_LEASE_MS} ms was not renewed in time)`));
        })
        .catch((err: unknown) => deps.onError?.(err));
    }, CLAIM_RENEWAL_MS);
    timer.unref();
    return {
      stop() {
        clearInterval(timer);
        return renewing;
      },
    };
  }
}
export type IdempotencyGate = ReturnType<typeof createIdempotencyGate>;
