import type { Knex } from 'knex';
import { containsPattern, type Db } from '../adapters/db/knex.js';
import type { Audience, LateCursor } from '../domain/campaigns/campaign.js';

/** A contact as the API shows it. */
export function contactView(row: Record<string, any>) {
  return {
    id: row.id,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    company: row.company,
    tags: row.tags,
    status: row.status,
    listIds: row.list_ids,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

/** One of an account's contacts by (normalised) email, or undefined. */
export const contactRow = (db: Db, accountId: string, email: string): Promise<Record<string, any> | undefined> =>
  db('contacts').where({ account_id: accountId, email }).first();

/** One of an account's contacts by the keyed hash of their address, or undefined. */
export const contactOfPerson = (db: Db, accountId: string, person: string): Promise<Record<string, any> | undefined> =>
  db('contacts').where({ account_id: accountId, person }).first();

/** Those of these emails that are the account's contacts, with the columns named. */
export const contactsByEmail = (db: Db, accountId: string, emails: string[], columns: string[]): Promise<Record<string, any>[]> =>
  db('contacts').where({ account_id: accountId }).whereIn('email', emails).select(columns);

/** One page of an account's contacts, newest first, and how many match in all. */
export async function contactsPage(db: Db, accountId: string, q: { page: number; limit: number; search?: string; status?: string; tag?: string; listId?: string }) {
  const base = db('contacts').where({ account_id: accountId });
  if (q.status) base.andWhere({ status: q.status });
  if (q.tag) base.andWhereRaw('tags @> ARRAY[?]::text[]', [q.tag]);
  if (q.listId) base.andWhereRaw('list_ids @> ARRAY[?]::text[]', [q.listId]);
  if (q.search) {
    // The same expression as the trigram index in src/projections/contacts.ts, so the index serves it.
    base.andWhereRaw(`(email || ' ' || coalesce(first_name, '') || ' ' || coalesce(last_name, '') || ' ' || coalesce(company, '')) ILIKE ?`, [containsPattern(q.search)]);
  }
  // The count is the costly half on a broad filter (every match is visited); run both at once.
  const [[{ n }], rows] = await Promise.all([
    base.clone().count('* as n'),
    base.orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).offset((q.page - 1) * q.limit).limit(q.limit),
  ]);
  return { rows, total: Number(n) };
}

/**
 * The account's contacts a campaign's audience names (both filters when both are given, every contact
 * when neither is). Unfiltered, the (account_id, id) index serves both the count and each page in id order.
 */
function audienceContacts(db: Db, accountId: string, audience: Audience): Knex.QueryBuilder {
  const q = db('contacts').where('account_id', accountId);
  if (audience.listId !== undefined) q.andWhereRaw('list_ids @> ARRAY[?]::text[]', [audience.listId]);
  if (audience.tag !== undefined) q.andWhereRaw('tags @> ARRAY[?]::text[]', [audience.tag]);
  return q;
}

export const audienceSize = async (db: Db, accountId: string, audience: Audience): Promise<number> =>
  Number((await audienceContacts(db, accountId, audience).count({ n: '*' }).first())!.n);

export interface AudienceContact {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  company: string | null;
  status: string;
}

const AUDIENCE_COLUMNS = ['id', 'email', 'first_name', 'last_name', 'company', 'status'];

/** The audience's next `limit` contacts in id order after `after` (from the first when null). */
export const audiencePage = (db: Db, accountId: string, audience: Audience, after: string | null, limit: number): Promise<AudienceContact[]> =>
  audienceContacts(db, accountId, audience).andWhere('id', '>', after ?? '').orderBy('id').limit(limit).select(AUDIENCE_COLUMNS);

/** Those of these contacts still in the audience. */
export const audienceContactsByIds = (db: Db, accountId: string, audience: Audience, ids: string[]): Promise<AudienceContact[]> =>
  audienceContacts(db, accountId, audience).whereIn('id', ids).select(AUDIENCE_COLUMNS);

/**
 * The audience's next `limit` contacts changed at or after `since`, in order of change after `after`
 * (from the first when null). `changedAt` is the database's text of the time, exact to the microsecond
 * (a suppression's change takes the log's time), so the next page begins right after it.
 */
export const audienceChangedSince = (db: Db, accountId: string, audience: Audience, since: string, after: LateCursor | null, limit: number): Promise<LateCursor[]> =>
  audienceContacts(db, accountId, audience)
    .andWhere('updated_at', '>=', since)
    .modify((q) => {
      if (after) q.andWhereRaw('(updated_at, id) > (?::timestamptz, ?)', [after.changedAt, after.id]);
    })
    .orderBy([{ column: 'updated_at' }, { column: 'id' }])
    .limit(limit)
    .select('id', db.raw('updated_at::text AS "changedAt"'));
