import type { Knex } from 'knex';
import { DELIVERY_STREAM_PREFIX, type DeliveryEvent } from '../domain/webhooks/delivery.js';
import type { RecordedEvent } from '../ports/event-store.js';
import type { ProcessManager } from './runner.js';
import type { SideEffect } from '../adapters/db/side-effects.js';
import { DELIVER_WEBHOOK_JOB, deliveryEffectId } from '../domain/webhooks/delivery.js';

/**
 * How long after a retry is recorded the effect decided here becomes due. The retry endpoint records
 * the same effect itself right after its append, due at once, and queues it only once it has read the
 * delivery it answers with; this one is for the process that stopped in between (the effect is unique
 * by id, so the first to record it wins, and a job that comes before its effect is due leaves it to
 * the job for that time).
 */
export const RETRY_TAKEOVER_MS = 2_000;

/**
 * A manual retry's series of attempts, decided from the `WebhookRetryRequested` on the delivery's
 * stream, so a retry the log has is made even when the endpoint that recorded it stopped before it
 * recorded the effect. Its ordering key is the delivery's own, recorded with its first series.
 */
export const webhookRetriesManager: ProcessManager = {
  name: 'webhook-retries',
  streamPrefixes: [DELIVERY_STREAM_PREFIX],
  eventTypes: ['WebhookRetryRequested'],
  async handle(events: RecordedEvent[], trx: Knex.Transaction): Promise<SideEffect[]> {
    const deliveryIdOf = (e: RecordedEvent) => e.streamId.slice(DELIVERY_STREAM_PREFIX.length);
    const firsts = await trx('side_effects')
      .whereIn('id', events.map((e) => deliveryEffectId(deliveryIdOf(e), 1)))
      .select('id', 'ordering_key');
    const orderingKeys = new Map(firsts.map((r: { id: string; ordering_key: string | null }) => [r.id, r.ordering_key ?? undefined]));
    const runAfter = new Date(Date.now() + RETRY_TAKEOVER_MS);
    return events.map((e) => {
      const deliveryId = deliveryIdOf(e);
      const { series } = e.data as Extract<DeliveryEvent, { type: 'WebhookRetryRequested' }>['data'];
      return {
        id: deliveryEffectId(deliveryId, series),
        kind: DELIVER_WEBHOOK_JOB,
        payload: { deliveryId, series },
        runAfter,
        orderingKey: orderingKeys.get(deliveryEffectId(deliveryId, 1)),
      };
    });
  },
};
