import type { Knex } from 'knex';
import type { RecordedEvent } from '../ports/event-store.js';
import { MESSAGE_STREAM_PREFIX } from '../domain/messages/events.js';
import type { Projection } from './projection.js';

/** provider's message id → our message, for provider events that do not echo our id back. */
export const providerMessageIdsProjection: Projection = {
  name: 'provider_message_ids',
  version: 1,
  tables: ['provider_message_ids'],
  streamPrefixes: [MESSAGE_STREAM_PREFIX],
  eventTypes: ['ProviderAccepted'],
  async setup(trx: Knex.Transaction, t: (base: string) => string) {
    await trx.schema.createTable(t('provider_message_ids'), (tb) => {
      tb.text('provider_message_id').primary();
      tb.text('message_id').notNullable();
    });
  },
  async handle(events: RecordedEvent[], trx: Knex.Transaction, t: (base: string) => string) {
    const rows = events.map((e) => ({ provider_message_id: e.data.providerMessageId, message_id: e.streamId.slice(MESSAGE_STREAM_PREFIX.length) }));
    if (rows.length) await trx(t('provider_message_ids')).insert(rows).onConflict('provider_message_id').ignore();
  },
};
