import type { Knex } from 'knex';
import { containsPattern, UNDEFINED_TABLE, type Db } from '../adapters/db/knex.js';
import { badRequest, notFound } from '../domain/errors.js';
import type { MessageStatus } from '../domain/messages/message.js';
import type { Principal } from '../domain/principal.js';
import { isMessageId } from '../domain/messages/events.js';
import { erasedPerson } from '../domain/privacy/personal-data.js';
import { contactOfPerson, contactView } from './contacts.js';
import { campaignRow } from './campaigns.js';

export const MESSAGE_STATUSES: MessageStatus[] = ['scheduled', 'queued', 'sent', 'delivered', 'bounced', 'complained', 'failed', 'cancelled'];

export interface MessageFilters {
  status?: MessageStatus;
  search?: string;
  from?: string;
  to?: string;
  subject?: string;
  campaignId?: string;
  /** every one of these tags */
  tags?: string[];
  /** every one of these metadata entries */
  metadata?: Record<string, string>;
}

const iso = (v: unknown) => (v ? new Date(v as string).toISOString() : null);

/** The list/detail fields of a message. */
export function messageView(row: Record<string, any>) {
  return {
    id: row.id,
    channel: row.channel,
    apiKeyId: row.api_key_id,
    status: row.status,
    from: row.from_address,
    to: row.to_address,
    subject: row.subject,
    provider: row.provider,
    providerMessageId: row.provider_message_id,
    campaignId: row.campaign_id,
    templateId: row.template_id,
    tags: row.tags ?? [],
    metadata: row.metadata ?? {},
    error: row.error,
    sendAt: iso(row.send_at),
    ...(row.channel === 'sms' ? { segments: row.segments, encoding: row.encoding } : {}),
    // name, type, size and content id of each attachment; the bytes are only on the message's event
    ...(row.channel === 'email' ? { attachments: row.attachments ?? [] } : {}),
    opens: row.opens,
    clicks: row.clicks,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

// The cursor is the last row's (createdAt, id). createdAt comes from JavaScript's queuedAt, so
// millisecond precision loses nothing and the cursor names exactly one position.
const CURSOR_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A real instant (not 2024-02-30), written the way toISOString writes it. */
function roundTrips(time: string): boolean {
  const d = new Date(time);
  return !Number.isNaN(d.getTime()) && d.toISOString() === time;
}

function encodeCursor(row: { created_at: unknown; id: string }) {
  return Buffer.from(JSON.stringify([new Date(row.created_at as string).toISOString(), row.id])).toString('base64url');
}
function decodeCursor(cursor: string): [string, string] {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    // Checked as strictly as it is written, so nothing odd ever reaches the database as a timestamp.
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && CURSOR_TIME.test(v[0]) && roundTrips(v[0]) && typeof v[1] === 'string' && isMessageId(v[1])) {
      return v as [string, string];
    }
  } catch {
    /* falls through */
  }
  throw badRequest('cursor is invalid');
}

/** What `GET /api/messages/aggregate` answers. */
export interface Aggregate {
  total: number;
  status: Record<MessageStatus, number>;
  opens: { unique: number; total: number };
  clicks: { unique: number; total: number };
}

const emptyAggregate = (): Aggregate => ({
  total: 0,
  status: Object.fromEntries(MESSAGE_STATUSES.map((s) => [s, 0])) as Record<MessageStatus, number>,
  opens: { unique: 0, total: 0 },
  clicks: { unique: 0, total: 0 },
});

/** Who may see what: an API key only its own messages, a dashboard user the whole account. */
function scoped(db: Db, principal: Principal): Knex.QueryBuilder {
  const q = db('messages').where('account_id', principal.accountId);
  return principal.kind === 'apiKey' ? q.andWhere('api_key_id', principal.apiKeyId) : q;
}

function filtered(db: Db, principal: Principal, f: MessageFilters): Knex.QueryBuilder {
  const q = scoped(db, principal);
  if (f.status) q.andWhere('status', f.status);
  if (f.from) q.andWhere('created_at', '>=', f.from);
  if (f.to) q.andWhere('created_at', '<=', f.to);
  if (f.subject) q.andWhere('subject', f.subject);
  if (f.campaignId) q.andWhere('campaign_id', f.campaignId);
  // Containment, so the GIN indexes on tags and metadata answer it.
  if (f.tags?.length) q.andWhereRaw('tags @> ?::text[]', [f.tags]);
  if (f.metadata && Object.keys(f.metadata).length) q.andWhereRaw('metadata @> ?::jsonb', [JSON.stringify(f.metadata)]);
  if (f.search) q.andWhereRaw(`(coalesce(to_address, '') || ' ' || from_address || ' ' || coalesce(subject, '')) ILIKE ?`, [containsPattern(f.search)]);
  return q;
}

/** The ids of an account's messages to one person (the keyed hash of their address or number), oldest first. */
export const messageIdsOfPerson = (db: Db, accountId: string, person: string): Promise<string[]> =>
  db('messages').where({ account_id: accountId, person }).orderBy([{ column: 'created_at' }, { column: 'id' }]).pluck('id');

/**
 * Whether the message's recipient `person` was erased after it was queued: the read model keeps that
 * on the row for good (erasedPerson), while a contact added later with the address has the same hash.
 */
export const sentToErasedPerson = async (db: Db, messageId: string, person: string): Promise<boolean> =>
  (await db('messages').where({ id: messageId, person: erasedPerson(person) }).first('id')) !== undefined;

/** Which of these messages the read model has (queued, whatever happened since). */
export const recordedMessageIds = async (db: Db, ids: string[]): Promise<Set<string>> => new Set(await db('messages').whereIn('id', ids).pluck('id'));

export function createMessageQueries(deps: { db: Db }) {
  /** Counted by the database, never by loading rows. */
  async function aggregate(principal: Principal, f: MessageFilters): Promise<Aggregate> {
    const row = await filtered(deps.db, principal, f)
      .select(
        deps.db.raw('count(*)::int AS total'),
        ...MESSAGE_STATUSES.map((s) => deps.db.raw(`count(*) FILTER (WHERE status = ?)::int AS ??`, [s, `s_${s}`])),
        deps.db.raw('count(*) FILTER (WHERE opens > 0)::int AS opens_unique'),
        deps.db.raw('coalesce(sum(opens), 0)::int AS opens_total'),
        deps.db.raw('count(*) FILTER (WHERE clicks > 0)::int AS clicks_unique'),
        deps.db.raw('coalesce(sum(clicks), 0)::int AS clicks_total'),
      )
      .first();
    return {
      total: row.total,
      status: Object.fromEntries(MESSAGE_STATUSES.map((s) => [s, row[`s_${s}`]])) as Record<MessageStatus, number>,
      opens: { unique: row.opens_unique, total: row.opens_total },
      clicks: { unique: row.clicks_unique, total: row.clicks_total },
    };
  }

  return {
    /** Newest first, keyset-paged on (createdAt, id): new messages land before the first page, never inside a later one. */
    async list(principal: Principal, f: MessageFilters & { cursor?: string; limit: number }) {
      const q = filtered(deps.db, principal, f);
      if (f.cursor) {
        const [createdAt, id] = decodeCursor(f.cursor);
        q.andWhereRaw('(created_at, id) < (?::timestamptz, ?)', [createdAt, id]);
      }
      const rows = await q.orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(f.limit + 1);
      const page = rows.slice(0, f.limit);
      return { items: page.map(messageView), nextCursor: rows.length > f.limit ? encodeCursor(page[page.length - 1]) : null };
    },

    async get(principal: Principal, id: string) {
      if (!isMessageId(id)) throw notFound(`message ${id} not found`);
      // One snapshot for the row, its timeline and the contact: read apart, a projection commit in
      // between could show a click on the timeline that the row's counts do not have yet.
      return deps.db.transaction(
        async (trx) => {
          const row = await scoped(trx, principal).andWhere('id', id).first();
          if (!row) throw notFound(`message ${id} not found`);
          const events = await trx('message_events').where({ message_id: id }).orderBy([{ column: 'occurred_at' }, { column: 'revision' }]);
          const view = {
            ...messageView(row),
            events: events.map((e) => ({ type: e.type, occurredAt: iso(e.occurred_at), data: e.data })),
          };
          // The joined rows are for the dashboard only: a key never sees names it did not send itself.
          if (principal.kind === 'apiKey') return view;
          const contact = row.channel === 'email' && row.person ? await contactOfPerson(trx, principal.accountId, row.person) : undefined;
          const campaign = row.campaign_id ? await campaignRow(trx, principal.accountId, row.campaign_id, ['id', 'name']) : undefined;
          return { ...view, contact: contact ? contactView(contact) : null, campaign: campaign ? { id: campaign.id, name: campaign.name } : null };
        },
        { isolationLevel: 'repeatable read', readOnly: true },
      );
    },

    aggregate,

    /**
     * The aggregate of each campaign's messages, by campaign id, from the stats the messages read
     * model keeps per campaign and status: a few rows per campaign however many messages it has.
     * The ids are of campaigns the caller has read from its own account (campaign ids are unique
     * across accounts); campaigns are the dashboard's (a JWT's whole account), so no key narrows them.
     */
    async campaignStats(principal: Principal, campaignIds: string[]): Promise<Map<string, Aggregate>> {
      const stats = new Map(campaignIds.map((id) => [id, emptyAggregate()]));
      if (campaignIds.length === 0) return stats;
      const rows = await deps.db('campaign_stats').whereIn('campaign_id', campaignIds).catch((err) => {
        if (err.code === UNDEFINED_TABLE) return undefined;
        throw err;
      });
      if (!rows) {
        // A read model from before the stats were kept, served while the release that keeps them
        // rebuilds it: the campaigns' messages are counted instead.
        for (const id of campaignIds) stats.set(id, await aggregate(principal, { campaignId: id }));
        return stats;
      }
      for (const r of rows) {
        const a = stats.get(r.campaign_id)!;
        const messages = Number(r.messages);
        a.total += messages;
        a.status[r.status as MessageStatus] += messages;
        a.opens.unique += Number(r.opened);
        a.opens.total += Number(r.opens);
        a.clicks.unique += Number(r.clicked);
        a.clicks.total += Number(r.clicks);
      }
      return stats;
    },
  };
}
export type MessageQueries = ReturnType<typeof createMessageQueries>;
