import type { Knex } from 'knex';
import type { RecordedEvent } from '../ports/event-store.js';
import { DELIVERY_STREAM_PREFIX, deliveryEventId } from '../domain/webhooks/delivery.js';
import { insertRows, rowsById, updateRows } from './bulk-writes.js';
import type { Projection } from './projection.js';

/** The delivery log the dashboard shows: status, attempts, last response, next attempt. */
export const webhookDeliveriesProjection: Projection = {
  name: 'webhook_deliveries',
  // 2: each delivery's event id (the body's `id`)
  version: 2,
  tables: ['webhook_deliveries'],
  streamPrefixes: [DELIVERY_STREAM_PREFIX],
  async setup(trx: Knex.Transaction, t: (base: string) => string) {
    await trx.schema.createTable(t('webhook_deliveries'), (tb) => {
      tb.text('id').primary();
      tb.text('account_id').notNullable();
      tb.text('subscription_id').notNullable();
      tb.text('event').notNullable();
      tb.text('event_id');
      tb.text('status').notNullable();
      tb.integer('attempts').notNullable();
      tb.integer('last_response_status');
      tb.text('last_error');
      tb.timestamp('next_attempt_at', { useTz: true });
      tb.timestamp('created_at', { useTz: true }).notNullable();
      tb.timestamp('updated_at', { useTz: true }).notNullable();
      tb.index(['subscription_id', 'created_at']);
      tb.index(['status', 'updated_at']);
    });
  },
  /** A fixed number of statements per batch: a fan-out to 1,000 subscriptions is 2,000 events here. */
  async handle(events: RecordedEvent[], trx: Knex.Transaction, t: (base: string) => string) {
    const created = new Map<string, DeliveryRow>();
    const changed = new Map<string, DeliveryState>();
    const idOf = (e: RecordedEvent) => e.streamId.slice(DELIVERY_STREAM_PREFIX.length);
    const scheduledHere = new Set(events.filter((e) => e.type === 'WebhookDeliveryScheduled').map(idOf));
    const existing = await rowsById<DeliveryState>(trx, t('webhook_deliveries'), events.map(idOf).filter((id) => !scheduledHere.has(id)), STATE_COLUMNS);
    for (const e of events) {
      const id = idOf(e);
      const d = e.data;
      if (e.type === 'WebhookDeliveryScheduled') {
        if (created.has(id) || existing.has(id)) continue;
        created.set(id, {
          id,
          account_id: d.accountId,
          subscription_id: d.subscriptionId,
          event: d.event,
          event_id: deliveryEventId(d),
          status: 'retrying',
          attempts: 0,
          last_response_status: null,
          last_error: null,
          next_attempt_at: d.scheduledAt,
          created_at: d.scheduledAt,
          updated_at: d.scheduledAt,
        });
        continue;
      }
      const row = created.get(id) ?? existing.get(id);
      if (!row || !evolve(row, e)) continue;
      if (!created.has(id)) changed.set(id, row);
    }
    await insertRows(trx, t('webhook_deliveries'), [...created.values()], { target: ['id'] });
    await updateRows(trx, t('webhook_deliveries'), [...changed.values()]);
  },
};

const STATE_COLUMNS = ['id', 'status', 'attempts', 'last_response_status', 'last_error', 'next_attempt_at', 'updated_at'] as const;
type DeliveryState = { [K in (typeof STATE_COLUMNS)[number]]: any };
type DeliveryRow = DeliveryState & { account_id: string; subscription_id: string; event: string; event_id: string | null; created_at: string };

/** Applies an attempt or a manual retry to a row; false for events that change nothing here. */
function evolve(row: DeliveryState, e: RecordedEvent): boolean {
  const d = e.data;
  switch (e.type) {
    case 'WebhookAttemptFailed':
    case 'WebhookDelivered':
    case 'WebhookDeliveryFailed':
      row.status = e.type === 'WebhookAttemptFailed' ? 'retrying' : e.type === 'WebhookDelivered' ? 'delivered' : 'failed';
      row.attempts = d.attempt;
      row.last_response_status = d.responseStatus;
      row.last_error = d.error;
      row.next_attempt_at = e.type === 'WebhookAttemptFailed' ? d.nextAttemptAt : null;
      row.updated_at = d.at;
      return true;
    case 'WebhookRetryRequested':
      row.status = 'retrying';
      row.attempts = 0;
      row.next_attempt_at = d.at;
      row.updated_at = d.at;
      return true;
    default:
      return false;
  }
}
