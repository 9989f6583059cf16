import type { Knex } from 'knex';
import type { RecordedEvent } from '../ports/event-store.js';
import { DELIVERY_STREAM_PREFIX } from '../domain/webhooks/delivery.js';
import type { Projection } from './projection.js';

/** The delivery log the dashboard shows: status, attempts, last response, next attempt. */
export const webhookDeliveriesProjection: Projection = {
  name: 'webhook_deliveries',
  version: 1,
  tables: ['webhook_deliveries'],
  streamPrefixes: [DELIVERY_STREAM_PREFIX],
  async setup(trx: Knex.Transaction, t: (base: string) => string) {
    await trx.schema.createTable(t('webhook_deliveries'), (tb) => {
      tb.text('id').primary();
      tb.text('account_id').notNullable();
      tb.text('subscription_id').notNullable();
      tb.text('event').notNullable();
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
  async handle(events: RecordedEvent[], trx: Knex.Transaction, t: (base: string) => string) {
    for (const e of events) {
      const id = e.streamId.slice(DELIVERY_STREAM_PREFIX.length);
      const d = e.data;
      switch (e.type) {
        case 'WebhookDeliveryScheduled':
          await trx(t('webhook_deliveries'))
            .insert({
              id,
              account_id: d.accountId,
              subscription_id: d.subscriptionId,
              event: d.event,
              status: 'retrying',
              attempts: 0,
              next_attempt_at: d.scheduledAt,
              created_at: d.scheduledAt,
              updated_at: d.scheduledAt,
            })
            .onConflict('id')
            .ignore();
          break;
        case 'WebhookAttemptFailed':
        case 'WebhookDelivered':
        case 'WebhookDeliveryFailed':
          await trx(t('webhook_deliveries'))
            .where({ id })
            .update({
              status: e.type === 'WebhookAttemptFailed' ? 'retrying' : e.type === 'WebhookDelivered' ? 'delivered' : 'failed',
              attempts: d.attempt,
              last_response_status: d.responseStatus,
              last_error: d.error,
              next_attempt_at: e.type === 'WebhookAttemptFailed' ? d.nextAttemptAt : null,
              updated_at: d.at,
            });
          break;
        case 'WebhookRetryRequested':
          await trx(t('webhook_deliveries')).where({ id }).update({ status: 'retrying', attempts: 0, next_attempt_at: d.at, updated_at: d.at });
          break;
      }
    }
  },
};
