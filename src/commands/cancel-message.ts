import type { Db } from '../adapters/db/knex.js';
import { lockSideEffect, markSideEffectDone } from '../adapters/db/side-effects.js';
import { fold } from '../domain/decider.js';
import { notFound } from '../domain/errors.js';
import { isMessageId, messageStream } from '../domain/messages/events.js';
import { mayCancel, messageDecider } from '../domain/messages/message.js';
import { actorOf, type Principal } from '../domain/principal.js';
import type { EventStore } from '../ports/event-store.js';
import type { Cause } from './caller.js';
import { execute } from './execute.js';
import type { WaitForProjection } from './read-your-writes.js';

/**
 * The message's provider-send side effect, as the send process manager records it: the cancel takes
 * its row before the send worker can (the two must name the same row; a test holds them together).
 */
export const SEND_EFFECT = { id: (messageId: string) => `send:${messageId}`, kind: 'provider.send' };

/**
 * CancelMessage: withdraws a message the provider has not been asked to send (a scheduled one,
 * typically). The send worker and the cancel must never both win: a worker that claimed the send may
 * be calling the provider right now. So the cancel locks the send's side-effect row (creating it, as
 * pending and due at the message's time, if the process manager has not recorded it yet), and only a
 * row still pending, one no worker has claimed, is cancelled: MessageCancelled is appended under that
 * lock and the effect is marked done with it. A worker's claim waits on the lock and then finds the
 * effect done. A crash in between rolls the lock back: the effect is pending again, and the worker
 * folds the stream at the message's time (cancelled or not) before calling anyone.
 */
export function createCancelMessage(deps: { db: Db; eventStore: EventStore; waitFor: WaitForProjection }) {
  return async function cancelMessage(principal: Principal, id: string, cause: Cause = {}): Promise<{ id: string; status: 'cancelled' }> {
    const streamId = messageStream(id);
    const read = async () => (isMessageId(id) ? fold(messageDecider, await deps.eventStore.readStream(streamId)) : messageDecider.initialState);
    const before = await read();
    // Another key's message, or another account's, is not there for this caller.
    if (!mayCancel(principal, before)) throw notFound(`message ${id} not found`);
    const answer = { id, status: 'cancelled' as const };
    if (before.status === 'cancelled') return answer;

    const sendAt = before.queued && 'sendAt' in before.queued && before.queued.sendAt ? new Date(before.queued.sendAt) : new Date();
    const position = await deps.db.transaction(async (trx) => {
      const effectId = SEND_EFFECT.id(id);
      const effectStatus = await lockSideEffect(trx, { id: effectId, kind: SEND_EFFECT.kind, payload: { messageId: id }, runAfter: sendAt });
      // The decider has the last word on the stream as it is now (read again under the lock) and on
      // the send's effect: claimed by a worker (calling the provider now, or it did), or done.
      const current = await read();
      if (current.status === 'cancelled') return undefined; // a concurrent cancel won: the same answer
      const command = { kind: 'cancel' as const, now: new Date().toISOString(), sendClaimed: effectStatus !== 'pending' };
      const result = await execute(messageDecider, command, {
        eventStore: deps.eventStore,
        streamId,
        commandId: `cancel-${id}`,
        metadata: { actor: actorOf(principal), ...cause },
      });
      await markSideEffectDone(trx, effectId);
      return result.position;
    });
    await deps.waitFor('messages', position);
    return answer;
  };
}
export type CancelMessage = ReturnType<typeof createCancelMessage>;
