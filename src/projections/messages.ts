import type { Knex } from 'knex';
import type { RecordedEvent } from '../ports/event-store.js';
import { MESSAGE_STREAM_PREFIX } from '../domain/messages/events.js';
import { statusAfter, type MessageStatus } from '../domain/messages/message.js';
import type { Projection } from './projection.js';

/** Timeline kinds of SPEC.md §2, by event type. */
export const TIMELINE_KIND: Record<string, string> = {
  ProviderAccepted: 'sent',
  Delivered: 'delivered',
  Bounced: 'bounced',
  Complained: 'complained',
  Opened: 'opened',
  Clicked: 'clicked',
};

/**
 * The message log: one row per message with its status (the domain's own status rules, via
 * `statusAfter`), open and click counts excluding suspected bots, and the `message_events` timeline.
 */
export const messagesProjection: Projection = {
  name: 'messages',
  version: 1,
  tables: ['messages', 'message_events'],
  streamPrefixes: [MESSAGE_STREAM_PREFIX],

  async setup(trx: Knex.Transaction, t: (base: string) => string) {
    await trx.raw('CREATE EXTENSION IF NOT EXISTS pg_trgm');
    await trx.schema.createTable(t('messages'), (tb) => {
      tb.text('id').primary();
      tb.text('account_id').notNullable();
      tb.text('api_key_id');
      tb.text('channel').notNullable();
      tb.text('status').notNullable();
      tb.text('from_address').notNullable();
      tb.text('to_address').notNullable();
      tb.text('subject');
      tb.text('provider').notNullable();
      tb.text('provider_message_id');
      tb.text('campaign_id');
      tb.text('template_id');
      tb.text('error');
      tb.integer('segments');
      tb.text('encoding');
      tb.integer('opens').notNullable().defaultTo(0);
      tb.integer('clicks').notNullable().defaultTo(0);
      tb.timestamp('created_at', { useTz: true }).notNullable();
      tb.timestamp('updated_at', { useTz: true }).notNullable();
    });
    const m = t('messages');
    await trx.raw(`CREATE INDEX ${m}_account_time ON ${m} (account_id, created_at DESC, id DESC)`);
    await trx.raw(`CREATE INDEX ${m}_key_time ON ${m} (api_key_id, created_at DESC, id DESC)`);
    await trx.raw(`CREATE INDEX ${m}_campaign ON ${m} (account_id, campaign_id) WHERE campaign_id IS NOT NULL`);
    await trx.raw(
      `CREATE INDEX ${m}_search ON ${m} USING gin ((to_address || ' ' || from_address || ' ' || coalesce(subject, '')) gin_trgm_ops)`,
    );
    await trx.schema.createTable(t('message_events'), (tb) => {
      tb.text('message_id').notNullable();
      tb.integer('revision').notNullable();
      tb.text('type').notNullable();
      tb.timestamp('occurred_at', { useTz: true }).notNullable();
      tb.jsonb('data').notNullable();
      tb.boolean('suspected_bot').notNullable().defaultTo(false);
      tb.primary(['message_id', 'revision']);
    });
  },

  async handle(events: RecordedEvent[], trx: Knex.Transaction, t: (base: string) => string) {
    for (const e of events) {
      const id = e.streamId.slice(MESSAGE_STREAM_PREFIX.length);
      const d = e.data;
      if (e.type === 'EmailQueued' || e.type === 'SmsQueued') {
        const email = e.type === 'EmailQueued';
        await trx(t('messages'))
          .insert({
            id,
            account_id: d.accountId,
            api_key_id: d.apiKeyId,
            channel: email ? 'email' : 'sms',
            status: 'queued',
            from_address: email ? d.fromEmail : d.originationNumber,
            to_address: d.to,
            subject: email ? d.subject : null,
            provider: d.provider,
            campaign_id: email ? d.campaignId : null,
            template_id: email ? d.templateId : null,
            segments: email ? null : d.segments,
            encoding: email ? null : d.encoding,
            created_at: d.queuedAt,
            updated_at: d.queuedAt,
          })
          .onConflict('id')
          .ignore();
        continue;
      }
      const row = await trx(t('messages')).where({ id }).first('status');
      if (!row) continue;
      const status = statusAfter(row.status as MessageStatus, e);
      const update: Record<string, unknown> = { status, updated_at: e.recordedAt };
      if (e.type === 'ProviderAccepted') update.provider_message_id = d.providerMessageId;
      if (e.type === 'ProviderFailed' || e.type === 'ProviderAttemptFailed') update.error = d.error;
      const counted = (e.type === 'Opened' || e.type === 'Clicked') && !d.suspectedBot;
      if (counted) update[e.type === 'Opened' ? 'opens' : 'clicks'] = trx.raw('?? + 1', [e.type === 'Opened' ? 'opens' : 'clicks']);
      await trx(t('messages')).where({ id }).update(update);
      const kind = TIMELINE_KIND[e.type];
      if (kind) {
        await trx(t('message_events'))
          .insert({
            message_id: id,
            revision: e.revision,
            type: kind,
            occurred_at: d.occurredAt ?? d.acceptedAt ?? e.recordedAt,
            data: JSON.stringify(d),
            suspected_bot: Boolean(d.suspectedBot),
          })
          .onConflict(['message_id', 'revision'])
          .ignore();
      }
    }
  },
};
