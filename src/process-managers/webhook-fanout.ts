import type { Knex } from 'knex';
import { contactDecider, contactStream } from '../domain/contacts/contact.js';
import { fold } from '../domain/decider.js';
import { deterministicEventId } from '../domain/event-id.js';
import { SUPPRESSION_STREAM_PREFIX, webhookEventFor, webhookSourceOf, type AddressSuppressed } from '../domain/suppression/suppression.js';
import { WEBHOOK_STREAM_PREFIX } from '../domain/webhooks/subscription.js';
import { DELIVER_WEBHOOK_JOB, deliveryEffectId } from '../domain/webhooks/delivery.js';
import { comparePositions, type EventStore, type Position, type RecordedEvent } from '../ports/event-store.js';
import type { ProcessManager } from './runner.js';
import type { PersonStreams } from '../commands/person-streams.js';
import type { SideEffect } from '../adapters/db/side-effects.js';
import { webhooksOfAccounts } from '../read-models/webhooks.js';
import { personOfEvent } from '../domain/privacy/personal-data.js';

/** The contact of a suppressed address as it stood when the suppression was recorded. */
export interface ContactAtEvent {
  id: string;
  first_name: string | null;
  last_name: string | null;
}

/**
 * The JSON body of docs/webhooks.md, with `id` (the suppression event's id: the same on every attempt and for
 * every subscription, for receivers to dedupe on). Contact fields are null when the address is no
 * contact. A phone suppression (an SMS opt-out) has no email: `data.email` is null and the number is
 * in `data.phone`, the one field beyond the spec's table.
 */
export function webhookBody(event: RecordedEvent, contact: ContactAtEvent | undefined) {
  const d = event.data as AddressSuppressed['data'];
  return JSON.stringify({
    id: event.id,
    event: webhookEventFor(d)!,
    occurredAt: d.occurredAt,
    accountId: d.accountId,
    data: {
      email: d.kind === 'phone' ? null : d.value,
      ...(d.kind === 'phone' ? { phone: d.value } : {}),
      source: webhookSourceOf(d.source),
      contactId: contact?.id ?? null,
      firstName: contact?.first_name ?? null,
      lastName: contact?.last_name ?? null,
      campaignId: d.campaignId ?? null,
    },
  });
}

/**
 * One delivery per (suppression event, subscribed endpoint). Ordered per endpoint and contact: the
 * ordering key makes a later event wait until the earlier one is delivered or has failed.
 *
 * Every endpoint subscribed before the event gets it and none removed before it does: the manager
 * follows the subscriptions' streams too, and a suppression that comes after a change to them waits
 * until the webhooks read model has that change (`waitForReadModel` in `prepare`, before the batch's
 * transaction; it throws when the read model has not caught up in time, and the batch is tried again).
 * Without it, an endpoint added just before a suppression, while the read model was a few
 * milliseconds behind, missed the event, and one just removed still got it.
 * (Changes from before this process started are not waited for: the read model took them long ago.)
 */
export function createWebhookFanoutManager(deps: {
  db: Knex;
  eventStore: Pick<EventStore, 'readStream'>;
  /** where a person's contact is (by keyed hash, or by address in a database from before sealing) */
  streams: Pick<PersonStreams, 'contact'>;
  waitForReadModel(name: string, position: Position): Promise<void>;
}): ProcessManager {
  let unconfirmedChange: Position | undefined;
  /** by suppression event id, decided in `prepare`: the endpoints that get it and the body they get */
  let deliveries = new Map<string, { subscriptionIds: string[]; body: string }>();

  // The contact's own stream up to the suppression, not the contacts read model as it stands: the
  // body is the same however late (or how often) the event is fanned out, and a contact upserted just
  // before its suppression is named even if that read model has not applied it yet.
  async function contactAt(event: RecordedEvent): Promise<ContactAtEvent | undefined> {
    const d = event.data as AddressSuppressed['data'];
    if (d.kind === 'phone') return undefined;
    // an erased person's suppression names them by hash alone
    const streamId = d.value === null ? contactStream(d.accountId, personOfEvent(event, d.value)) : await deps.streams.contact(d.accountId, d.value);
    const history = await deps.eventStore.readStream(streamId);
    const state = fold(contactDecider, history.filter((e) => comparePositions(e.position, event.position) < 0));
    return state.contactId && state.fields ? { id: state.contactId, first_name: state.fields!.firstName, last_name: state.fields!.lastName } : undefined;
  }

  return {
    name: 'webhook-fanout',
    streamPrefixes: [SUPPRESSION_STREAM_PREFIX, WEBHOOK_STREAM_PREFIX],
    async prepare(events: RecordedEvent[]): Promise<void> {
      let change = unconfirmedChange;
      let confirm: Position | undefined;
      for (const event of events) {
        if (event.streamId.startsWith(WEBHOOK_STREAM_PREFIX)) change = event.position;
        else if (event.type === 'AddressSuppressed' && change) [confirm, change] = [change, undefined];
      }
      // the read model has every change up to the last one a suppression of this batch comes after
      if (confirm) await deps.waitForReadModel('webhooks', confirm);
      unconfirmedChange = change;

      // One read of the batch's accounts' endpoints; contacts only for events that have an endpoint
      // (most accounts have none, and an import can suppress thousands of addresses at once).
      const suppressions = events.filter((e) => e.type === 'AddressSuppressed');
      const accounts = [...new Set(suppressions.map((e) => (e.data as AddressSuppressed['data']).accountId))];
      const endpoints = accounts.length ? await webhooksOfAccounts(deps.db, accounts) : [];
      const subscribed = suppressions.flatMap((event) => {
        const d = event.data as AddressSuppressed['data'];
        const name = webhookEventFor(d);
        if (!name) return [];
        const subscriptionIds = endpoints.filter((w) => w.account_id === d.accountId && w.events.includes(name)).map((w) => w.id);
        return subscriptionIds.length ? [{ event, subscriptionIds }] : [];
      });
      deliveries = new Map(
        await Promise.all(subscribed.map(async ({ event, subscriptionIds }) => [event.id, { subscriptionIds, body: webhookBody(event, await contactAt(event)) }] as const)),
      );
    },
    async handle(events: RecordedEvent[]): Promise<SideEffect[]> {
      const effects: SideEffect[] = [];
      for (const event of events) {
        const decided = deliveries.get(event.id);
        if (!decided) continue;
        const d = event.data as AddressSuppressed['data'];
        const name = webhookEventFor(d)!;
        // per endpoint and person, by keyed hash: an ordering key is kept in clear (side_effects)
        const person = personOfEvent(event, d.value);
        for (const subscriptionId of decided.subscriptionIds) {
          const deliveryId = deterministicEventId('delivery', event.id, subscriptionId);
          effects.push({
            id: deliveryEffectId(deliveryId, 1),
            kind: DELIVER_WEBHOOK_JOB,
            payload: {
              deliveryId,
              series: 1,
              schedule: {
                deliveryId,
                accountId: d.accountId,
                subscriptionId,
                event: name,
                body: decided.body,
                eventId: event.id,
                orderingKey: `${subscriptionId}:${person}`,
                scheduledAt: new Date().toISOString(),
              },
            },
            runAfter: new Date(),
            orderingKey: `${subscriptionId}:${person}`,
          });
        }
      }
      return effects;
    },
  };
}
