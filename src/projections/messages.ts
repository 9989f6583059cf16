import type { Knex } from 'knex';
import type { RecordedEvent } from '../ports/event-store.js';
import { MESSAGE_EVENT_TYPES, MESSAGE_STREAM_PREFIX } from '../domain/messages/events.js';
import { CONTACT_ERASED, CONTACT_STREAM_PREFIX } from '../domain/contacts/contact.js';
import { ACCOUNT_STREAM_PREFIX, CONTENT_EXPIRED } from '../domain/accounts/account.js';
import { statusAfter, type MessageStatus } from '../domain/messages/message.js';
import { attachmentSummary, type QueuedAttachment } from '../domain/email/attachments.js';
import { insertRows, rowsById, updateRows } from './bulk-writes.js';
import { erasedPerson, PERSONAL_DATA } from '../domain/privacy/personal-data.js';
import { campaignStatsChange, CAMPAIGN_STATS_TABLE, setupCampaignStats } from './campaign-stats.js';
import { formerIdsWithoutPersonalPart } from './former-event-ids.js';
import type { Projection } from './projection.js';

/** The message timeline's kinds (sent, delivered, bounced, complained, opened, clicked), by event type. */
export const TIMELINE_KIND: Record<string, string> = {
  ProviderAccepted: 'sent',
  Delivered: 'delivered',
  Bounced: 'bounced',
  Complained: 'complained',
  Opened: 'opened',
  Clicked: 'clicked',
};

/** The mutable part of a message row, kept in memory while a batch is applied. */
interface MessageState {
  id: string;
  campaign_id: string | null;
  status: MessageStatus;
  provider_message_id: string | null;
  error: string | null;
  opens: number;
  clicks: number;
  updated_at: Date;
}

type NewRow = MessageState & Record<string, unknown>;

function queuedRow(id: string, e: RecordedEvent): NewRow {
  const d = e.data;
  const email = e.type === 'EmailQueued';
  return {
    id,
    account_id: d.accountId,
    api_key_id: d.apiKeyId,
    channel: email ? 'email' : 'sms',
    status: statusAfter(null, e)!,
    from_address: email ? d.fromEmail : d.originationNumber,
    to_address: d.to,
    person: e.metadata.person ?? null,
    subject: email ? d.subject : null,
    provider: d.provider,
    provider_message_id: null,
    campaign_id: email ? d.campaignId : null,
    template_id: email ? d.templateId : null,
    error: null,
    send_at: email && d.sendAt ? new Date(d.sendAt) : null,
    // what was attached, never the bytes: this row is read by every list page
    attachments: email && d.attachments?.length ? (d.attachments as QueuedAttachment[]).map(attachmentSummary) : null,
    segments: email ? null : d.segments,
    encoding: email ? null : d.encoding,
    tags: email ? (d.tags ?? []) : [],
    metadata: email ? (d.metadata ?? {}) : {},
    opens: 0,
    clicks: 0,
    created_at: new Date(d.queuedAt),
    updated_at: new Date(d.queuedAt),
  };
}

/** What a message row shows once its content has expired: the address, the subject, the attachments' names and the provider's error (which may quote the address) go. */
const REDACTED_ROW = { to_address: null, subject: null, attachments: null, error: null };
/** ... and once its person is erased, their keyed hash is marked erased (see erasedPerson). */
const erasedRow = (person: string) => ({ ...REDACTED_ROW, person: erasedPerson(person) });
// Timeline entries of provider outcomes (every kind but `sent`) read as a rebuild reads them once the key is gone.
const REDACTED_OUTCOME = PERSONAL_DATA.Delivered.redacted;

function redactRow(row: NewRow, timeline: Record<string, unknown>[], fields: Partial<NewRow>) {
  Object.assign(row, fields);
  for (const entry of timeline) {
    if (entry.message_id === row.id && entry.type !== 'sent') entry.data = { ...(entry.data as object), ...REDACTED_OUTCOME };
  }
}

/** Folds one non-queue event into a row: the domain's own status rule, counts without suspected bots. */
function evolve(row: MessageState, e: RecordedEvent): void {
  const d = e.data;
  row.status = statusAfter(row.status, e) ?? row.status;
  row.updated_at = e.recordedAt;
  if (e.type === 'ProviderAccepted') row.provider_message_id = d.providerMessageId;
  if (e.type === 'ProviderFailed' || e.type === 'ProviderAttemptFailed') row.error = d.error;
  if (e.type === 'Opened' && !d.suspectedBot) row.opens++;
  if (e.type === 'Clicked' && !d.suspectedBot) row.clicks++;
}

/**
 * The message log: one row per message with its status (the domain's own status rules, via
 * `statusAfter`), open and click counts excluding suspected bots (total per message; "unique" in the
 * aggregate is the number of messages with at least one), and the `message_events` timeline.
 *
 * A batch costs a fixed number of statements whatever its size (read the touched rows, insert the new
 * ones, update the changed ones, insert the timeline): a rebuild replays millions of events, and three
 * round trips per event would cap it far below the 20,000 events/s it aims for.
 */
export const messagesProjection: Projection = {
  name: 'messages',
  // 2: batched handler, status and campaign covering indexes; 3: tags and metadata (GIN-indexed), send_at (scheduled sends), attachment summaries;
  // 4: the recipient's keyed hash, erasures and retention redact; 5: campaign stats
  version: 6,
  tables: ['messages', 'message_events', CAMPAIGN_STATS_TABLE],
  // contact streams for their erasures, account streams for retention's cutoffs, and of those only
  // these: an import of 100,000 contacts is not 200 empty batches here
  streamPrefixes: [MESSAGE_STREAM_PREFIX, CONTACT_STREAM_PREFIX, ACCOUNT_STREAM_PREFIX],
  eventTypes: [...MESSAGE_EVENT_TYPES, CONTACT_ERASED, CONTENT_EXPIRED],

  async setup(trx: Knex.Transaction, t: (base: string) => string) {
    await trx.raw('CREATE EXTENSION IF NOT EXISTS pg_trgm');
    await trx.schema.createTable(t('messages'), (tb) => {
      tb.text('id').primary();
      tb.text('account_id').notNullable();
      tb.text('api_key_id');
      tb.text('channel').notNullable();
      tb.text('status').notNullable();
      tb.text('from_address').notNullable();
      // null once the recipient is erased, or their message content expired
      tb.text('to_address');
      tb.text('person');
      tb.text('subject');
      tb.text('provider').notNullable();
      tb.text('provider_message_id');
      tb.text('campaign_id');
      tb.text('template_id');
      tb.text('error');
      tb.timestamp('send_at', { useTz: true });
      tb.integer('segments');
      tb.text('encoding');
      tb.specificType('tags', 'text[]').notNullable().defaultTo('{}');
      tb.jsonb('metadata').notNullable().defaultTo('{}');
      tb.jsonb('attachments');
      tb.integer('opens').notNullable().defaultTo(0);
      tb.integer('clicks').notNullable().defaultTo(0);
      tb.timestamp('created_at', { useTz: true }).notNullable();
      tb.timestamp('updated_at', { useTz: true }).notNullable();
    });
    const m = t('messages');
    // Keyset paging newest first, for the account (JWT), one key, and one status.
    await trx.raw(`CREATE INDEX ${m}_account_time ON ${m} (account_id, created_at DESC, id DESC)`);
    await trx.raw(`CREATE INDEX ${m}_key_time ON ${m} (api_key_id, created_at DESC, id DESC) WHERE api_key_id IS NOT NULL`);
    await trx.raw(`CREATE INDEX ${m}_status_time ON ${m} (account_id, status, created_at DESC, id DESC)`);
    // A campaign's aggregate reads only this index (index-only scan), not 100,000 heap rows.
    await trx.raw(
      `CREATE INDEX ${m}_campaign ON ${m} (account_id, campaign_id) INCLUDE (status, opens, clicks, api_key_id, created_at) WHERE campaign_id IS NOT NULL`,
    );
    await trx.raw(`CREATE INDEX ${m}_person ON ${m} (account_id, person) WHERE person IS NOT NULL`);
    await trx.raw(
      `CREATE INDEX ${m}_search ON ${m} USING gin ((coalesce(to_address, '') || ' ' || from_address || ' ' || coalesce(subject, '')) gin_trgm_ops)`,
    );
    // `tag=` and `metadata[key]=value` filters are containment (@>), which these answer.
    await trx.raw(`CREATE INDEX ${m}_tags ON ${m} USING gin (tags)`);
    await trx.raw(`CREATE INDEX ${m}_metadata ON ${m} USING gin (metadata jsonb_path_ops)`);
    await trx.schema.createTable(t('message_events'), (tb) => {
      tb.text('message_id').notNullable();
      tb.integer('revision').notNullable();
      tb.text('type').notNullable();
      tb.timestamp('occurred_at', { useTz: true }).notNullable();
      tb.jsonb('data').notNullable();
      tb.boolean('suspected_bot').notNullable().defaultTo(false);
      tb.primary(['message_id', 'revision']);
    });
    await setupCampaignStats(trx, t);
  },

  async handle(events: RecordedEvent[], trx: Knex.Transaction, t: (base: string) => string) {
    const created = new Map<string, NewRow>();
    const touched = new Map<string, MessageState>();
    const timeline: Record<string, unknown>[] = [];
    const erasures: { accountId: string; person?: string; before?: string }[] = [];

    // Rows this batch changes but did not create: one read for all of them.
    const queuedHere = new Set(events.filter((e) => e.type === 'EmailQueued' || e.type === 'SmsQueued').map((e) => e.streamId));
    const existing = await rowsById<MessageState>(
      trx,
      t('messages'),
      events.filter((e) => !queuedHere.has(e.streamId) && e.streamId.startsWith(MESSAGE_STREAM_PREFIX)).map((e) => e.streamId.slice(MESSAGE_STREAM_PREFIX.length)),
      ['id', 'campaign_id', 'status', 'provider_message_id', 'error', 'opens', 'clicks', 'updated_at'],
    );
    const campaignStats = campaignStatsChange();
    for (const row of existing.values()) campaignStats.before(row);

    for (const e of events) {
      if (e.type === CONTACT_ERASED) {
        // Rows made earlier in this batch are redacted here, the stored ones below: a message queued
        // after the erasure (in this batch) is a new one, under a new key, and stays readable.
        for (const row of created.values()) if (row.account_id === e.data.accountId && row.person === e.data.person) redactRow(row, timeline, erasedRow(e.data.person));
        erasures.push({ accountId: e.data.accountId, person: e.data.person });
        continue;
      }
      if (e.type === CONTENT_EXPIRED) {
        const before = new Date(`${e.data.before}T00:00:00.000Z`);
        for (const row of created.values()) if (row.account_id === e.data.accountId && (row.created_at as Date) < before) redactRow(row, timeline, REDACTED_ROW);
        erasures.push({ accountId: e.data.accountId, before: e.data.before });
        continue;
      }
      if (!e.streamId.startsWith(MESSAGE_STREAM_PREFIX)) continue;
      const id = e.streamId.slice(MESSAGE_STREAM_PREFIX.length);
      if (e.type === 'EmailQueued' || e.type === 'SmsQueued') {
        // A second queue event for one message cannot happen (the decider refuses it); keep the first.
        if (!created.has(id) && !existing.has(id)) created.set(id, queuedRow(id, e));
        continue;
      }
      const row = created.get(id) ?? existing.get(id);
      if (!row) continue; // an outcome for a message this read model never saw queued
      evolve(row, e);
      if (!created.has(id)) touched.set(id, row);
      const kind = TIMELINE_KIND[e.type];
      if (kind) {
        timeline.push({
          message_id: id,
          revision: e.revision,
          type: kind,
          occurred_at: e.data.occurredAt ?? e.data.acceptedAt ?? e.recordedAt,
          data: e.data,
          suspected_bot: Boolean(e.data.suspectedBot),
        });
      }
    }

    for (const row of [...created.values(), ...existing.values()]) campaignStats.after(row);
    await insertRows(trx, t('messages'), [...created.values()], { target: ['id'] });
    // its campaign never changes
    await updateRows(trx, t('messages'), [...touched.values()].map(({ campaign_id, ...changed }) => changed));
    await campaignStats.write(trx, t);
    await insertRows(trx, t('message_events'), timeline, { target: ['message_id', 'revision'] });
    for (const { accountId, person, before } of erasures) {
      const ids = () => {
        const q = trx(t('messages')).where({ account_id: accountId }).whereNotIn('id', [...created.keys()]).select('id');
        return person ? q.andWhere({ person }) : q.andWhere('created_at', '<', `${before}T00:00:00.000Z`);
      };
      const formerIds = formerIdsWithoutPersonalPart();
      await trx.raw(`UPDATE ?? SET data = data || ?::jsonb || ${formerIds.sql} WHERE type <> 'sent' AND message_id IN (${ids().toQuery()})`, [
        t('message_events'),
        JSON.stringify(REDACTED_OUTCOME),
        ...formerIds.bindings,
      ]);
      await trx(t('messages')).whereIn('id', ids()).update(person ? erasedRow(person) : REDACTED_ROW);
    }
  },
};
