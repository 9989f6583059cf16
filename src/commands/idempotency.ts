import { randomUUID } from 'node:crypto';
import { createId } from '../cuid.js';
import {
  IDEMPOTENCY_TTL_MS,
  applyIdempotencyEvent,
  idempotencyDecider,
  type IdempotencyCommand,
  type IdempotencyState,
  type StoredResponse,
} from '../domain/idempotency/record.js';
import type { IdempotencyStore } from '../ports/idempotency-store.js';

/** A claim this process holds: what it completes with, and the seed of its message ids. */
export type HeldClaim = Extract<IdempotencyState, { status: 'in_flight' }> & { scope: string; key: string };

/** `retaken`: the claim was an earlier request's, whose holder stopped renewing it (it may have done part of its work) */
export type ClaimResult = { kind: 'claimed'; claim: HeldClaim; retaken: boolean } | { kind: 'replay'; response: StoredResponse };

const MAX_ATTEMPTS = 10;

/**
 * The idempotency record's command handler: decide on the record as last seen, write the result only
 * where the record is still that (compare and set), and on a lost race read it again and decide again.
 * A first claim decides on "absent" without reading, so a new key costs one statement.
 */
export function createIdempotentRequests(deps: { store: IdempotencyStore; now?: () => Date }) {
  const now = deps.now ?? (() => new Date());

  async function run(scope: string, key: string, command: IdempotencyCommand, state: IdempotencyState): Promise<IdempotencyState> {
    for (let attempt = 1; ; attempt++) {
      const events = idempotencyDecider.decide(command, state);
      if (events.length === 0) return state;
      const next = events.reduce(applyIdempotencyEvent, state);
      if (await deps.store.replace(scope, key, state, next)) return next;
      // a completion that lost its race lost its claim to a takeover: the new holder answers for the key
      if (command.kind === 'complete') return state;
      if (attempt >= MAX_ATTEMPTS) throw new Error('the idempotency record kept changing under its claim');
      state = await deps.store.load(scope, key);
    }
  }

  return {
    /** claims `key` for a request with `fingerprint`, or the response to answer again; a 409 AppError when taken */
    async claim(scope: string, key: string, fingerprint: string): Promise<ClaimResult> {
      const command: IdempotencyCommand = { kind: 'claim', fingerprint, token: randomUUID(), seed: createId(), now: now().toISOString() };
      const state = await run(scope, key, command, idempotencyDecider.initialState);
      if (state.status === 'completed') return { kind: 'replay', response: state.response };
      if (state.status !== 'in_flight') throw new Error('a claim ended without a record');
      // a first claim is held since it was made; a retaken one since it was retaken
      return { kind: 'claimed', claim: { ...state, scope, key }, retaken: state.heldSince !== state.claimedAt };
    },

    /**
     * Starts the held claim's lease again (its request is still running); false when the claim is no
     * longer this holder's: its lease ran out and another request took the key over.
     */
    async renew(claim: HeldClaim): Promise<boolean> {
      const { scope, key, ...held } = claim;
      const state = await run(scope, key, { kind: 'renew', token: held.token, now: now().toISOString() }, held);
      return state.status === 'in_flight' && state.token === held.token;
    },

    /** the held request's answer: kept when it is a success, the key let go otherwise */
    async complete(claim: HeldClaim, response: StoredResponse): Promise<void> {
      const { scope, key, ...held } = claim;
      await run(scope, key, { kind: 'complete', token: held.token, response }, held);
    },

    /** deletes the records past their day */
    sweep: () => deps.store.sweep(new Date(now().getTime() - IDEMPOTENCY_TTL_MS)),
  };
}
export type IdempotentRequests = ReturnType<typeof createIdempotentRequests>;
