import type { Db } from '../adapters/db/knex.js';
import { messageStream } from '../domain/messages/events.js';
import { messageDecider } from '../domain/messages/message.js';
import type { NormalizedProviderEvent } from '../domain/provider-events/normalized.js';
import { fold } from '../domain/decider.js';
import type { EventStore } from '../ports/event-store.js';
import { execute } from './execute.js';
import type { SuppressionCommands } from './suppressions.js';

/**
 * Records provider events on their message streams and suppresses where they say so. Idempotent per
 * provider event: the outcome's command id is the provider event id (a redelivery appends nothing) and
 * a suppression that exists is not repeated. Returns once the suppression list shows the change.
 */
export function createProviderEventIngest(deps: { eventStore: EventStore; db: Db; suppressions: SuppressionCommands; actor: string }) {
  async function resolveMessageId(e: NormalizedProviderEvent): Promise<string | null> {
    if (e.messageId) return e.messageId;
    if (!e.providerMessageId) return null;
    const row = await deps.db('provider_message_ids').where({ provider_message_id: e.providerMessageId }).first('message_id');
    return row?.message_id ?? null;
  }

  async function apply(e: NormalizedProviderEvent, messageId: string): Promise<boolean> {
    const streamId = messageStream(messageId);
    const state = fold(messageDecider, await deps.eventStore.readStream(streamId));
    if (!state.queued) return false;
    if (e.outcome) {
      await execute(messageDecider, { kind: 'recordOutcome', event: e.outcome }, {
        eventStore: deps.eventStore,
        streamId,
        commandId: e.providerEventId,
        metadata: { actor: deps.actor },
      });
    }
    if (e.suppress) {
      await deps.suppressions.suppress({
        accountId: state.queued.accountId,
        email: e.recipient,
        reason: e.suppress.reason,
        source: e.suppress.source,
        messageId,
        occurredAt: e.outcome?.data.occurredAt,
        detail: e.outcome?.type === 'Bounced' ? (e.outcome.data.diagnostic ?? null) : null,
        actor: deps.actor,
        commandId: `suppress:${e.providerEventId}`,
      });
    }
    return true;
  }

  return {
    async ingest(events: NormalizedProviderEvent[]): Promise<{ recorded: number; pending: number }> {
      let recorded = 0;
      let pending = 0;
      for (const e of events) {
        const messageId = await resolveMessageId(e);
        if (messageId && (await apply(e, messageId))) {
          recorded++;
        } else if (e.providerMessageId) {
          await deps.db('unmatched_provider_events')
            .insert({ provider_event_id: e.providerEventId, provider_message_id: e.providerMessageId, payload: JSON.stringify(e) })
            .onConflict('provider_event_id')
            .ignore();
          pending++;
        }
      }
      return { recorded, pending };
    },

    /** Applies parked events whose provider message id has become known since. */
    async retryUnmatched(limit = 500): Promise<number> {
      const rows = await deps
        .db('unmatched_provider_events as u')
        .join('provider_message_ids as p', 'p.provider_message_id', 'u.provider_message_id')
        .select('u.provider_event_id', 'u.payload', 'p.message_id')
        .limit(limit);
      for (const row of rows) {
        await apply(row.payload as NormalizedProviderEvent, row.message_id);
        await deps.db('unmatched_provider_events').where({ provider_event_id: row.provider_event_id }).delete();
      }
      return rows.length;
    },
  };
}
export type ProviderEventIngest = ReturnType<typeof createProviderEventIngest>;
