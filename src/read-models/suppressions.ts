import { containsPattern, type Db } from '../adapters/db/knex.js';

/** The account's suppression of one person (by the keyed hash of their address or number), or undefined. */
export const suppressionOfPerson = (db: Db, accountId: string, person: string): Promise<Record<string, any> | undefined> =>
  db('suppressions').where({ account_id: accountId, person }).first();

/**
 * Up to `limit` of an account's suppressions, newest first, from after a (createdAt, person) position:
 * each row's `after` is the position after it. The person's keyed hash orders entries of one instant
 * (an erased person's entry has no address left), and the instant is kept as PostgreSQL writes it, to
 * the microsecond a provider's timestamp may have, which a JavaScript date would round away.
 */
export function suppressionsPage(db: Db, accountId: string, q: { search?: string; after?: [createdAt: string, person: string]; limit: number }): Promise<Record<string, any>[]> {
  const rows = db('suppressions').where({ account_id: accountId }).select('*', db.raw('json_build_array(created_at::text, person) AS after'));
  if (q.search) rows.andWhere('value', 'ilike', containsPattern(q.search));
  if (q.after) rows.andWhereRaw('(created_at, person) < (?, ?)', q.after);
  return rows.orderBy([{ column: 'created_at', order: 'desc' }, { column: 'person', order: 'desc' }]).limit(q.limit);
}

export const suppressionCount = async (db: Db, accountId: string): Promise<number> =>
  Number((await db('suppressions').where({ account_id: accountId }).count({ n: '*' }))[0].n);

/** Those of these persons (keyed hashes) the account has suppressed. */
export const suppressedPersons = async (db: Db, accountId: string, persons: string[]): Promise<Set<string>> =>
  new Set((await db('suppressions').where({ account_id: accountId }).whereRaw('person = ANY(?)', [persons]).select('person')).map((r) => r.person as string));

/** Those of these phone numbers the account has suppressed. */
export const suppressedPhones = async (db: Db, accountId: string, numbers: string[]): Promise<Set<string>> =>
  new Set((await db('suppressions').where({ account_id: accountId, kind: 'phone' }).whereRaw('value = ANY(?)', [numbers]).select('value')).map((r) => r.value as string));
