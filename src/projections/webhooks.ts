import type { Knex } from 'knex';
import { WEBHOOK_STREAM_PREFIX } from '../domain/webhooks/subscription.js';
import type { RecordedEvent } from '../ports/event-store.js';
import type { Projection } from './projection.js';

/** Webhook subscriptions (the customer's endpoints), with the secrets that sign for them. */
export const webhooksProjection: Projection = {
  name: 'webhooks',
  // 2: a rotated secret, and the time it signs from
  version: 2,
  tables: ['webhooks'],
  streamPrefixes: [WEBHOOK_STREAM_PREFIX],
  async setup(trx: Knex.Transaction, t: (base: string) => string) {
    await trx.schema.createTable(t('webhooks'), (tb) => {
      tb.text('id').primary();
      tb.text('account_id').notNullable().index();
      tb.text('url').notNullable();
      tb.jsonb('events').notNullable();
      tb.text('secret').notNullable();
      tb.text('next_secret');
      tb.timestamp('next_secret_at', { useTz: true });
      tb.timestamp('created_at', { useTz: true }).notNullable();
      tb.timestamp('updated_at', { useTz: true }).notNullable();
    });
  },
  async handle(events: RecordedEvent[], trx: Knex.Transaction, t: (base: string) => string) {
    for (const e of events) {
      const d = e.data;
      if (e.type === 'WebhookSubscribed') {
        await trx(t('webhooks'))
          .insert({ id: d.id, account_id: d.accountId, url: d.url, events: JSON.stringify(d.events), secret: d.secret, created_at: d.createdAt, updated_at: d.createdAt })
          .onConflict('id')
          .ignore();
      } else if (e.type === 'WebhookChanged') {
        await trx(t('webhooks'))
          .where({ id: d.id })
          .update({ ...(d.url ? { url: d.url } : {}), ...(d.events ? { events: JSON.stringify(d.events) } : {}), updated_at: d.changedAt });
      } else if (e.type === 'WebhookSecretRotated') {
        await trx(t('webhooks')).where({ id: d.id }).update({ secret: d.secret, next_secret: d.next, next_secret_at: d.nextAt, updated_at: d.rotatedAt });
      } else if (e.type === 'WebhookRemoved') {
        await trx(t('webhooks')).where({ id: d.id }).delete();
      }
    }
  },
};
