import type { Knex } from 'knex';
import type { RecordedEvent } from '../ports/event-store.js';
import { MESSAGE_EVENT_TYPES, MESSAGE_STREAM_PREFIX } from '../domain/messages/events.js';
import { CONTACT_ERASED, CONTACT_STREAM_PREFIX } from '../domain/contacts/contact.js';
import { PERSONAL_DATA } from '../domain/privacy/personal-data.js';
import { ACCOUNT_STREAM_PREFIX, CONTENT_EXPIRED } from '../domain/accounts/account.js';
import { insertRows } from './bulk-writes.js';
import { formerIdsWithoutPersonalPart } from './former-event-ids.js';
import type { Projection } from './projection.js';
import { TIMELINE_KIND } from './messages.js';

/** Kinds of the changes feed that are the message's own life rather than its provider timeline. */
const LIFECYCLE_KIND: Record<string, string> = {
  EmailQueued: 'queued',
  SmsQueued: 'queued',
  ProviderFailed: 'failed',
  MessageCancelled: 'cancelled',
};

/** What the changes feed calls an event: a timeline kind, `queued`, `failed` or `cancelled`; undefined for the rest. */
export function changeKind(eventType: string): string | undefined {
  return TIMELINE_KIND[eventType] ?? LIFECYCLE_KIND[eventType];
}

/**
 * The feed's data for a queue event: who, to whom and what, never the body (HTML, text, attachments):
 * a feed row is read by every poll of the account and must stay small.
 */
function queuedData(e: RecordedEvent): Record<string, unknown> {
  const d = e.data;
  const email = e.type === 'EmailQueued';
  const summary: Record<string, unknown> = {
    channel: email ? 'email' : 'sms',
    from: email ? d.from : d.originationNumber,
    to: d.to,
    apiKeyId: d.apiKeyId ?? null,
  };
  if (email) Object.assign(summary, { subject: d.subject, campaignId: d.campaignId ?? null, templateId: d.templateId ?? null });
  else Object.assign(summary, { segments: d.segments, encoding: d.encoding });
  for (const optional of ['sendAt', 'tags', 'metadata']) if (d[optional] !== undefined) summary[optional] = d[optional];
  return summary;
}

const occurredAt = (e: RecordedEvent) =>
  e.data.occurredAt ?? e.data.acceptedAt ?? e.data.failedAt ?? e.data.cancelledAt ?? e.data.queuedAt ?? e.recordedAt;

/**
 * The changes feed: one row per event of a message that a caller follows, keyed by the event's log
 * position. The position, not a number this projection hands out, is the feed's cursor: a rebuild
 * writes the same rows at the same positions, so a cursor issued before it stays valid after it.
 * The runner applies batches in commit order, one at a time, so once a row is visible every row
 * at a lower position already is: a reader paging by position never skips one that commits late.
 *
 * Only queue events name the account and key; `message_change_owners` remembers them for the
 * message's later events.
 */
/** Provider outcome kinds, whose data names the recipient: redacted as a rebuild reads them once the key is gone. */
const OUTCOME_KINDS = ['delivered', 'bounced', 'complained', 'opened', 'clicked'];

/**
 * An erasure (or retention's cutoff) nulls what the feed showed of the person (the address and subject of `queued`, the
 * recipient, IP, user agent and URL of outcomes and the address or link an earlier version ended their provider event id
 * with, the provider's error of `failed`), exactly as the redacted events would write it.
 */
async function redact(trx: Knex.Transaction, t: (base: string) => string, accountId: string, whose: { person: string } | { before: string }) {
  const ids = () => {
    const q = trx(t('message_change_owners')).where({ account_id: accountId }).select('message_id');
    return 'person' in whose ? q.andWhere({ person: whose.person }) : q.andWhere('queued_at', '<', `${whose.before}T00:00:00.000Z`);
  };
  const c = t('message_changes');
  const where = () => trx(c).whereIn('message_id', ids());
  await where().where({ type: 'queued' }).whereRaw(`jsonb_exists(data, 'subject')`).update({ data: trx.raw(`data || '{"to":null,"subject":null}'::jsonb`) });
  await where().where({ type: 'queued' }).whereRaw(`NOT jsonb_exists(data, 'subject')`).update({ data: trx.raw(`data || '{"to":null}'::jsonb`) });
  const formerIds = formerIdsWithoutPersonalPart();
  await where()
    .whereIn('type', OUTCOME_KINDS)
    .update({ data: trx.raw(`data || ?::jsonb || ${formerIds.sql}`, [JSON.stringify(PERSONAL_DATA.Delivered.redacted), ...formerIds.bindings]) });
  await where().where({ type: 'failed' }).update({ data: trx.raw('data || ?::jsonb', [JSON.stringify(PERSONAL_DATA.ProviderFailed.redacted)]) });
}

export const messageChangesProjection: Projection = {
  name: 'message_changes',
  // 2: the recipient's keyed hash on owners, erasures redact
  version: 2,
  tables: ['message_changes', 'message_change_owners'],
  // contact streams for their erasures, account streams for retention's cutoffs, and of those only
  // these: an import of 100,000 contacts is not 200 empty batches here
  streamPrefixes: [MESSAGE_STREAM_PREFIX, CONTACT_STREAM_PREFIX, ACCOUNT_STREAM_PREFIX],
  eventTypes: [...MESSAGE_EVENT_TYPES, CONTACT_ERASED, CONTENT_EXPIRED],

  async setup(trx: Knex.Transaction, t: (base: string) => string) {
    await trx.schema.createTable(t('message_changes'), (tb) => {
      tb.bigInteger('commit_pos').notNullable();
      tb.bigInteger('prepare_pos').notNullable();
      tb.uuid('event_id').notNullable();
      tb.text('account_id').notNullable();
      tb.text('api_key_id');
      tb.text('message_id').notNullable();
      tb.text('type').notNullable();
      tb.timestamp('occurred_at', { useTz: true }).notNullable();
      tb.jsonb('data').notNullable();
      tb.primary(['commit_pos', 'prepare_pos']);
    });
    const c = t('message_changes');
    // A page is a range scan of one of these from the cursor on.
    await trx.raw(`CREATE INDEX ${c}_account ON ${c} (account_id, commit_pos, prepare_pos)`);
    await trx.raw(`CREATE INDEX ${c}_key ON ${c} (api_key_id, commit_pos, prepare_pos) WHERE api_key_id IS NOT NULL`);
    await trx.schema.createTable(t('message_change_owners'), (tb) => {
      tb.text('message_id').primary();
      tb.text('account_id').notNullable();
      tb.text('api_key_id');
      tb.text('person');
      tb.timestamp('queued_at', { useTz: true });
      tb.index(['account_id', 'person']);
    });
  },

  async handle(events: RecordedEvent[], trx: Knex.Transaction, t: (base: string) => string) {
    const owners = new Map<string, { account_id: string; api_key_id: string | null }>();
    const created: Record<string, unknown>[] = [];
    for (const e of events) {
      if (typeof e.data?.accountId === 'string' && e.streamId.startsWith(MESSAGE_STREAM_PREFIX) && !owners.has(e.streamId)) {
        const owner = { account_id: e.data.accountId, api_key_id: e.data.apiKeyId ?? null };
        owners.set(e.streamId, owner);
        created.push({ message_id: e.streamId.slice(MESSAGE_STREAM_PREFIX.length), ...owner, person: e.metadata.person ?? null, queued_at: e.data.queuedAt ?? null });
      }
    }
    const unknown = [...new Set(events.filter((e) => !owners.has(e.streamId) && changeKind(e.type)).map((e) => e.streamId.slice(MESSAGE_STREAM_PREFIX.length)))];
    if (unknown.length) {
      const rows = await trx(t('message_change_owners')).whereRaw('message_id = ANY(?::text[])', [unknown]).select('message_id', 'account_id', 'api_key_id');
      for (const r of rows) owners.set(MESSAGE_STREAM_PREFIX + r.message_id, { account_id: r.account_id, api_key_id: r.api_key_id });
    }

    let changes: Record<string, unknown>[] = [];
    const write = async () => {
      await insertRows(trx, t('message_change_owners'), created.splice(0), { target: ['message_id'] });
      await insertRows(trx, t('message_changes'), changes, { target: ['commit_pos', 'prepare_pos'] });
      changes = [];
    };
    for (const e of events) {
      if (e.type === CONTACT_ERASED) {
        // what came before the erasure is written first, so the erasure reaches it
        await write();
        await redact(trx, t, e.data.accountId, { person: e.data.person });
        continue;
      }
      if (e.type === CONTENT_EXPIRED) {
        await write();
        await redact(trx, t, e.data.accountId, { before: e.data.before });
        continue;
      }
      const type = changeKind(e.type);
      const owner = owners.get(e.streamId);
      if (!type || !owner) continue; // not a feed kind, or a message this read model never saw queued
      changes.push({
        commit_pos: e.position.commit.toString(),
        prepare_pos: e.position.prepare.toString(),
        event_id: e.id,
        ...owner,
        message_id: e.streamId.slice(MESSAGE_STREAM_PREFIX.length),
        type,
        occurred_at: occurredAt(e),
        data: type === 'queued' ? queuedData(e) : e.data,
      });
    }
    await write();
  },
};
