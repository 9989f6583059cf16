import { containsPattern, type Db } from '../adapters/db/knex.js';

/** The account's suppression of one person (by the keyed hash of their address or number), or undefined. */
export const suppressionOfPerson = (db: Db, accountId: string, person: string): Promise<Record<string, any> | undefined> =>
  db('suppressions').where({ account_id: accountId, person }).first();

/** Up to `limit` of an account's suppressions, newest first, from after a (createdAt, value) position. */
export function suppressionsPage(db: Db, accountId: string, q: { search?: string; after?: [createdAt: string, value: string]; limit: number }): Promise<Record<string, any>[]> {
  const rows = db('suppressions').where({ account_id: accountId });
  if (q.search) rows.andWhere('value', 'ilike', containsPattern(q.search));
  if (q.after) rows.andWhereRaw('(created_at, value) < (?, ?)', q.after);
  return rows.orderBy([{ column: 'created_at', order: 'desc' }, { column: 'value', order: 'desc' }]).limit(q.limit);
}

/** Those of these phone numbers the account has suppressed. */
export const suppressedPhones = async (db: Db, accountId: string, numbers: string[]): Promise<Set<string>> =>
  new Set((await db('suppressions').where({ account_id: accountId, kind: 'phone' }).whereRaw('value = ANY(?)', [numbers]).select('value')).map((r) => r.value as string));
