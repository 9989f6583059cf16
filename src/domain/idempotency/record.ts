import { createHash } from 'node:crypto';
import type { Decider } from '../decider.js';
import { conflict } from '../errors.js';

/**
 * One Idempotency-Key of one caller: the rules of claiming it, answering again from it, and letting it
 * go. Persisted as one table row (the state below), not as an event stream: the record is operational
 * state that must vanish after a day (or at once, after a refused request) and holds a whole response
 * body, neither of which belongs in an append-only log kept forever; its events exist so the rules can
 * be stated and tested as given/when/then, and the store writes the state they fold into.
 */

/**
 * Whose keys a record is under: an API key's (by the hash each request with it presents) or a
 * dashboard user's account. Keys of different callers never meet.
 */
export const keyScope = (keyHash: string) => `key:${keyHash}`;
export const accountScope = (accountId: string) => `account:${accountId}`;
/** Every caller of an account: its users, and each API key it has had (a revoked key's records live out their day). */
export const scopesOfAccount = (accountId: string, keyHashes: readonly string[]) => [accountScope(accountId), ...keyHashes.map(keyScope)];

/** How long a completed request is answered again. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * A claim's lease: its holder renews it every CLAIM_RENEWAL_MS while the request runs, so a claim not
 * renewed for this long belongs to a process that died mid-request (or lost the database for as long)
 * and may be taken over. Its client's retries get 409 until then: 2 minutes when claims were not
 * renewed, now about 12 s. A takeover is safe even against a holder that is only stalled: the message
 * ids a claim hands out stay the same when it is retaken, so the message stream refuses to queue one
 * twice, and the stalled holder's completion is refused (its token is no longer the record's).
 */
export const CLAIM_LEASE_MS = 12_000;
/** A third of the lease: two renewals may fail or come late before a live holder loses its claim. */
export const CLAIM_RENEWAL_MS = CLAIM_LEASE_MS / 3;
/**
 * How long a holder renews at most: far above any request's duration, so that a request hung on
 * something that never answers does not keep its key from its client's retries for ever.
 */
export const CLAIM_RENEWED_FOR_MS = 2 * 60 * 1000;

export const MISMATCH_MESSAGE = 'Idempotency-Key was used with a different request body';
export const IN_PROGRESS_MESSAGE = 'a request with this Idempotency-Key is in progress';

export interface StoredResponse {
  status: number;
  body: unknown;
}

interface Claim {
  /** the hash of the request the key was first used with (method, route and canonical body) */
  fingerprint: string;
  /** when the request was first claimed, ISO; the 24 hours count from here */
  claimedAt: string;
  /** when the current holder claimed or retook it, ISO */
  heldSince: string;
  /** identifies the current holder: changes on each claim and takeover, so a write by an earlier holder is refused */
  token: string;
  /** what the request's message ids derive from (messageIdFor), the same across takeovers */
  seed: string;
}

export type IdempotencyState =
  | { status: 'absent' }
  | ({ status: 'in_flight' } & Claim)
  | ({ status: 'completed'; response: StoredResponse } & Claim);

export type IdempotencyCommand =
  | { kind: 'claim'; fingerprint: string; token: string; seed: string; now: string }
  /** the holder is still at work: its lease starts again from `now` */
  | { kind: 'renew'; token: string; now: string }
  /** the first request's answer: a 2xx/3xx is kept for replay, a 4xx or 5xx lets the key go */
  | { kind: 'complete'; token: string; response: StoredResponse };

export type IdempotencyEvent =
  | { type: 'IdempotencyKeyClaimed'; data: { fingerprint: string; token: string; seed: string; claimedAt: string } }
  | { type: 'IdempotencyClaimRetaken'; data: { token: string; at: string } }
  | { type: 'IdempotencyClaimRenewed'; data: { token: string; at: string } }
  | { type: 'IdempotencyRequestCompleted'; data: { token: string; response: StoredResponse } }
  | { type: 'IdempotencyKeyForgotten'; data: { token: string; status: number } };

/** Whether a request answered `status` is remembered: only a success; a refusal or a failure may be retried. */
export const isRemembered = (status: number) => status < 400;

const ms = (iso: string) => Date.parse(iso);

export function applyIdempotencyEvent(state: IdempotencyState, event: { type: string; data: any }): IdempotencyState {
  const e = event as IdempotencyEvent;
  switch (e.type) {
    case 'IdempotencyKeyClaimed':
      return { status: 'in_flight', fingerprint: e.data.fingerprint, claimedAt: e.data.claimedAt, heldSince: e.data.claimedAt, token: e.data.token, seed: e.data.seed };
    case 'IdempotencyClaimRetaken':
      return state.status === 'absent' ? state : { ...state, status: 'in_flight', token: e.data.token, heldSince: e.data.at };
    case 'IdempotencyClaimRenewed':
      return state.status === 'in_flight' ? { ...state, heldSince: e.data.at } : state;
    case 'IdempotencyRequestCompleted':
      return state.status === 'absent' ? state : { ...state, status: 'completed', response: e.data.response };
    case 'IdempotencyKeyForgotten':
      return { status: 'absent' };
    default:
      return state;
  }
}

export const idempotencyDecider: Decider<IdempotencyState, IdempotencyCommand, IdempotencyEvent> = {
  initialState: { status: 'absent' },
  evolve: applyIdempotencyEvent,

  /**
   * claim: no events means "answer the stored response again" (state.response); a 409 when the key is
   * taken by another request. renew and complete: nothing when the claim is no longer this holder's.
   */
  decide(command, state) {
    switch (command.kind) {
      case 'claim': {
        const now = ms(command.now);
        const claimed: IdempotencyEvent = {
          type: 'IdempotencyKeyClaimed',
          data: { fingerprint: command.fingerprint, token: command.token, seed: command.seed, claimedAt: command.now },
        };
        // a record past its day is as good as none: the key starts over, with new message ids
        if (state.status === 'absent' || now - ms(state.claimedAt) >= IDEMPOTENCY_TTL_MS) return [claimed];
        if (state.fingerprint !== command.fingerprint) throw conflict(MISMATCH_MESSAGE);
        if (state.status === 'completed') return [];
        if (now - ms(state.heldSince) >= CLAIM_LEASE_MS) return [{ type: 'IdempotencyClaimRetaken', data: { token: command.token, at: command.now } }];
        throw conflict(IN_PROGRESS_MESSAGE);
      }
      case 'renew':
        if (state.status !== 'in_flight' || state.token !== command.token) return [];
        return [{ type: 'IdempotencyClaimRenewed', data: { token: command.token, at: command.now } }];
      case 'complete': {
        if (state.status !== 'in_flight' || state.token !== command.token) return [];
        return isRemembered(command.response.status)
          ? [{ type: 'IdempotencyRequestCompleted', data: { token: command.token, response: command.response } }]
          : [{ type: 'IdempotencyKeyForgotten', data: { token: command.token, status: command.response.status } }];
      }
    }
  },
};

/**
 * The id of the `index`-th message a claimed request creates: a function of the claim's seed, so the
 * process that takes over a dead one's claim names the same messages (and the message stream refuses
 * to queue one twice). Shaped like the cuid2 ids the service makes otherwise (a letter, then base 36).
 */
export function messageIdFor(seed: string, index: number): string {
  if (index === 0) return seed;
  const digest = createHash('sha256').update(`${seed}:${index}`).digest();
  return String.fromCharCode(97 + (digest[0] % 26)) + BigInt(`0x${digest.toString('hex')}`).toString(36).slice(1, 24);
}
