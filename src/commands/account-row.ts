import type { Db } from '../adapters/db/knex.js';
import { readModelBehind } from '../projections/waiter.js';

/**
 * The row of an authenticated caller's account in the accounts read model. The account exists (the
 * caller signed in to it), so a missing row means the read model lags: an API process that started
 * before any worker, or a worker still catching up.
 */
export async function accountRow(db: Db, accountId: string, columns: string[] = ['*']): Promise<Record<string, any>> {
  const row = await db('accounts').where({ id: accountId }).first(columns);
  if (!row) throw readModelBehind('accounts');
  return row;
}
