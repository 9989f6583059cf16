import type { Db } from '../adapters/db/knex.js';
import { messageDecider, type MessageState } from '../domain/messages/message.js';
import { rechecksSuppression } from '../domain/messages/suppression-recheck.js';
import type { EventMetadata, EventStore, RecordedEvent } from '../ports/event-store.js';
import type { PersonOf } from '../ports/key-store.js';
import { suppressionReasonOf } from '../read-models/suppressions.js';
import { execute } from './execute.js';

/** A message about to be handed to the provider: its stream as the send worker read it, and who asks. */
export interface DueMessage {
  streamId: string;
  history: RecordedEvent[];
  state: MessageState;
  metadata: EventMetadata;
  now: string;
}

/**
 * RecheckSuppression: a message whose provider call comes long after its admission (a scheduled send,
 * see rechecksSuppression) has its recipient looked up on the account's suppression list again, by
 * the keyed hash the list holds them under; one suppressed since is failed (ProviderFailed naming the
 * suppression) instead of sent. `withheld`: it was, and the provider must not be called.
 */
export function createSuppressionRecheck(deps: { db: Db; eventStore: EventStore; personOf: PersonOf }) {
  return async function recheckSuppression(message: DueMessage): Promise<{ state: MessageState; withheld: boolean }> {
    const queued = message.state.queued!;
    if (!rechecksSuppression(queued, message.now)) return { state: message.state, withheld: false };
    const suppressedFor = await suppressionReasonOf(deps.db, queued.accountId, deps.personOf(queued.to));
    const result = await execute(messageDecider, { kind: 'recheckSuppression', suppressedFor, now: message.now }, {
      eventStore: deps.eventStore,
      streamId: message.streamId,
      commandId: 'recheck-suppression',
      metadata: message.metadata,
      history: message.history,
    });
    return { state: result.state, withheld: result.events.length > 0 };
  };
}
