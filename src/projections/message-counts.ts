import type { Knex } from 'knex';
import type { RecordedEvent } from '../ports/event-store.js';
import { MESSAGE_STREAM_PREFIX } from '../domain/messages/events.js';
import { insertRows, rowsById } from './bulk-writes.js';
import { TIMELINE_KIND } from './messages.js';
import type { Projection } from './projection.js';


const HOUR_MS = 3_600_000;

/**
 * Counts of message events per account, sending key, hour and kind: what the dashboard's chart reads,
 * so drawing a year of a busy account's activity reads a few thousand rows, never its messages.
 * `message_owners` remembers whose each message is, because the outcome events (a delivery, an open)
 * do not repeat the account or the key.
 */
export const messageCountsProjection: Projection = {
  name: 'message_counts',
  version: 1,
  tables: ['message_counts', 'message_owners'],
  streamPrefixes: [MESSAGE_STREAM_PREFIX],
  eventTypes: ['EmailQueued', 'SmsQueued', ...Object.keys(TIMELINE_KIND)],

  async setup(trx: Knex.Transaction, t: (base: string) => string) {
    await trx.schema.createTable(t('message_owners'), (tb) => {
      tb.text('id').primary();
      tb.text('account_id').notNullable();
      // '' for the dashboard's own sends, so it can be part of the counts' key
      tb.text('api_key_id').notNullable();
    });
    await trx.schema.createTable(t('message_counts'), (tb) => {
      tb.text('account_id').notNullable();
      tb.timestamp('hour', { useTz: true }).notNullable();
      tb.text('api_key_id').notNullable();
      tb.text('kind').notNullable();
      tb.bigInteger('n').notNullable();
      tb.primary(['account_id', 'hour', 'api_key_id', 'kind']);
    });
  },

  async handle(events: RecordedEvent[], trx: Knex.Transaction, t: (base: string) => string) {
    const idOf = (e: RecordedEvent) => e.streamId.slice(MESSAGE_STREAM_PREFIX.length);
    const owners = new Map<string, { id: string; account_id: string; api_key_id: string }>();
    for (const e of events) {
      if (e.type === 'EmailQueued' || e.type === 'SmsQueued') {
        owners.set(idOf(e), { id: idOf(e), account_id: e.data.accountId, api_key_id: e.data.apiKeyId ?? '' });
      }
    }
    const counted = events.filter((e) => TIMELINE_KIND[e.type] && !e.data.suspectedBot);
    const known = await rowsById<{ id: string; account_id: string; api_key_id: string }>(
      trx,
      t('message_owners'),
      counted.map(idOf).filter((id) => !owners.has(id)),
      ['id', 'account_id', 'api_key_id'],
    );
    const counts = new Map<string, { account_id: string; hour: Date; api_key_id: string; kind: string; n: number }>();
    for (const e of counted) {
      const owner = owners.get(idOf(e)) ?? known.get(idOf(e));
      if (!owner) continue; // an outcome for a message this read model never saw queued
      const at = new Date(e.data.occurredAt ?? e.data.acceptedAt ?? e.recordedAt).getTime();
      const hour = new Date(Math.floor(at / HOUR_MS) * HOUR_MS);
      const kind = TIMELINE_KIND[e.type];
      const key = `${owner.account_id}\u0000${hour.toISOString()}\u0000${owner.api_key_id}\u0000${kind}`;
      const row = counts.get(key) ?? { account_id: owner.account_id, hour, api_key_id: owner.api_key_id, kind, n: 0 };
      row.n++;
      counts.set(key, row);
    }
    await insertRows(trx, t('message_owners'), [...owners.values()], { target: ['id'] });
    if (counts.size === 0) return;
    await trx.raw(
      `INSERT INTO ?? AS c (account_id, hour, api_key_id, kind, n)
       SELECT account_id, hour, api_key_id, kind, n FROM json_populate_recordset(NULL::??, ?::json)
       ON CONFLICT (account_id, hour, api_key_id, kind) DO UPDATE SET n = c.n + excluded.n`,
      [t('message_counts'), t('message_counts'), JSON.stringify([...counts.values()])],
    );
  },
};
