import type { Db } from '../adapters/db/knex.js';
import { messageStream } from '../domain/messages/events.js';
import { messageDecider } from '../domain/messages/message.js';
import type { NormalizedProviderEvent } from '../domain/provider-events/normalized.js';
import { fold } from '../domain/decider.js';
import { admitProviderEvent, type ProviderEventOrigin } from '../domain/provider-events/event-admission.js';
import { reportedSuppression } from '../domain/provider-events/reported-suppression.js';
import { parkedReport } from '../domain/provider-events/provider-event-ids.js';
import { contactEraser } from '../domain/contacts/contact.js';
import { normaliseEmail } from '../domain/email/address.js';
import type { Logger } from 'pino';
import type { EventStore } from '../ports/event-store.js';
import { correlationOf } from './caller.js';
import { execute } from './execute.js';
import { executeTogether, type Step } from './execute-together.js';
import type { SuppressionCommands } from './suppressions.js';
import type { PersonOf } from '../ports/key-store.js';
import { createPersonStreams, type PersonStreams } from './person-streams.js';
import { messageIdForProvider, parkedEventsNowMatched } from '../read-models/provider-message-ids.js';

/** How long an event naming an unknown provider message id is kept waiting for that id. */
const PARKED_FOR_MS = 7 * 24 * 3_600_000;

/**
 * Records provider events on their message streams and suppresses where they say so. Idempotent per
 * provider event: the outcome's command id is the provider event id (a redelivery appends nothing) and
 * a suppression that exists is not repeated. Returns once the suppression list shows the change.
 */
export function createProviderEventIngest(deps: {
  eventStore: EventStore;
  db: Db;
  suppressions: SuppressionCommands;
  actor: string;
  logger?: Logger;
  /** names a report's recipient by keyed hash: to match a message whose address is gone, and a parked event, so that an erasure finds it */
  personOf: PersonOf;
  /** where a person's contact stream is, which says whether they were erased */
  streams?: Pick<PersonStreams, 'contact'>;
}) {
  const streams = deps.streams ?? createPersonStreams({ eventStore: deps.eventStore, personOf: deps.personOf, namedByAddress: false });

  /** Whether the person of `email` was erased (and not added again since), as their contact stream says. */
  async function erased(accountId: string, email: string): Promise<boolean> {
    const history = await deps.eventStore.readStream(await streams.contact(accountId, normaliseEmail(email)));
    return fold(contactEraser, history).erased === true;
  }

  async function resolveMessageId(e: NormalizedProviderEvent): Promise<string | null> {
    if (e.messageId) return e.messageId;
    if (!e.providerMessageId) return null;
    return messageIdForProvider(deps.db, e.providerMessageId);
  }

  /**
   * Records the outcome and suppresses if the event says so, when the event agrees with the message it
   * names (admitProviderEvent): 'missing' when the message does not exist (yet), 'ignored' when the
   * event does not concern it. The stream is read once; the decider checks again on what it appends to.
   * Outcome and suppression are one write (executeTogether: one transaction where the store allows
   * it): a bounce is never recorded without the suppression it calls for. Where the store writes
   * stream by stream, the suppression goes first, and the provider's redelivery of the event (our
   * answer was an error) completes what is missing under the same command id.
   */
  async function apply(e: NormalizedProviderEvent, messageId: string): Promise<'recorded' | 'ignored' | 'missing'> {
    const streamId = messageStream(messageId);
    const history = await deps.eventStore.readStream(streamId);
    const state = fold(messageDecider, history);
    if (!state.queued) return 'missing';
    const origin: ProviderEventOrigin = {
      // events parked before they carried their provider: the event id's prefix tells it
      provider: e.provider ?? (e.providerEventId.startsWith('pm:') ? 'postmark' : 'ses'),
      providerMessageId: e.providerMessageId,
      recipient: e.recipient,
      person: deps.personOf(e.recipient),
      receivedAt: new Date().toISOString(),
    };
    // Decided on the stream as read: the acceptance an event may record carries the event's own
    // provider id, so recording it first could not change the answer.
    const admission = admitProviderEvent(state, origin);
    if (!admission.ok) {
      // Acknowledged, not refused: the event came through an authenticated channel and no retry of it
      // would change the answer. Not parked either: the message is known, the event is not about it.
      deps.logger?.warn({ messageId, providerEventId: e.providerEventId, provider: origin.provider, reason: admission.reason }, 'provider event ignored');
      return 'ignored';
    }
    // Only an event that names the message by our id (tag / Metadata) ties the provider's id to it.
    const acceptedAs =
      e.messageId && e.providerMessageId ? { providerMessageId: e.providerMessageId, at: e.acceptedAt ?? e.outcome?.data.occurredAt ?? new Date().toISOString() } : undefined;
    const records = Boolean(e.outcome || acceptedAs);
    const outcome = { kind: 'recordOutcome' as const, event: e.outcome, acceptedAs, origin, formerId: e.formerId };
    const options = { commandId: e.providerEventId, metadata: { actor: deps.actor, causationId: e.providerEventId, ...correlationOf(history[0]) } };
    if (!e.suppress) {
      if (records) await execute(messageDecider, outcome, { eventStore: deps.eventStore, streamId, history, ...options });
      return 'recorded';
    }
    const { accountId } = state.queued;
    // the message's address reads as null once its person is erased or its content expired
    const messageTo = typeof state.queued.to === 'string' ? state.queued.to : null;
    const whom = reportedSuppression({
      messageTo,
      person: state.person,
      reported: e.recipient,
      detail: e.outcome?.type === 'Bounced' ? (e.outcome.data.diagnostic ?? null) : null,
      erased: messageTo === null && (await erased(accountId, e.recipient)),
    });
    // a campaign's message names its campaign, as an unsubscribe from it does (the contact.* webhooks carry it)
    const campaignId = 'campaignId' in state.queued ? state.queued.campaignId : null;
    const steps: Step[] = [
      await deps.suppressions.step({ accountId, ...whom, reason: e.suppress.reason, source: e.suppress.source, messageId, campaignId, occurredAt: e.outcome?.data.occurredAt ?? e.suppress.occurredAt }),
    ];
    if (records) steps.push({ decider: messageDecider, command: outcome, streamId });
    // a suppression by hash alone names its person in its metadata (the read model keys the entry on it)
    const [suppressed] = await executeTogether(deps.eventStore, steps, 'person' in whom ? { ...options, metadata: { ...options.metadata, person: whom.person } } : options);
    await deps.suppressions.listed(suppressed.position);
    return 'recorded';
  }

  return {
    async ingest(events: NormalizedProviderEvent[]): Promise<{ recorded: number; pending: number }> {
      let recorded = 0;
      let pending = 0;
      for (const e of events) {
        const messageId = await resolveMessageId(e);
        const applied = messageId ? await apply(e, messageId) : 'missing';
        if (applied === 'recorded') {
          recorded++;
        } else if (applied === 'missing' && e.providerMessageId) {
          await deps.db('unmatched_provider_events')
            .insert({
              provider_event_id: e.providerEventId,
              provider_message_id: e.providerMessageId,
              payload: JSON.stringify(e),
              person: e.recipient ? deps.personOf(e.recipient) : null,
            })
            .onConflict('provider_event_id')
            .ignore();
          pending++;
        }
      }
      return { recorded, pending };
    },

    /**
     * Applies parked events whose provider message id has become known since. Events that never
     * match (a configuration set shared with another sender, say) are dropped after PARKED_FOR_MS.
     */
    async retryUnmatched(limit = 500): Promise<number> {
      await deps.db('unmatched_provider_events').where('received_at', '<', new Date(Date.now() - PARKED_FOR_MS)).delete();
      const rows = await parkedEventsNowMatched(deps.db, limit);
      for (const row of rows) {
        // Applied, then unparked: a stop in between leaves the row, and applying it again appends nothing.
        await apply(parkedReport(row.payload as NormalizedProviderEvent), row.message_id);
        await deps.db('unmatched_provider_events').where({ provider_event_id: row.provider_event_id }).delete();
      }
      return rows.length;
    },
  };
}
export type ProviderEventIngest = ReturnType<typeof createProviderEventIngest>;
