import type { Knex } from 'knex';
import { UNDEFINED_TABLE, type Db } from '../adapters/db/knex.js';
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

/** The accounts that keep message content for a number of days (retention). */
export const accountsWithRetention = (db: Db): Promise<{ id: string; retention_days: number }[]> =>
  db('accounts').whereNotNull('retention_days').select('id', 'retention_days');

/** The accounts with SMS enabled. */
export const accountsSendingSms = (db: Db): Promise<{ id: string }[]> => db('accounts').whereRaw("(sms->>'enabled')::boolean").select('id');

/** An account's provider send rate (messages a second), null when unlimited or unknown. */
export const providerRatePerSecond = (db: Db, accountId: string): Promise<number | null> =>
  db('accounts')
    .where({ id: accountId })
    .first('provider_rate_per_second')
    .then((row) => (row?.provider_rate_per_second ?? null) as number | null);

/**
 * A dashboard user's login email and current password hash, by id (the session check, the password
 * change), and whether the session `sessionId` was signed out. Undefined while the read model lags
 * behind the user's registration: a token names a user that exists.
 */
export async function userCredentials(db: Db, userId: string, sessionId?: string): Promise<{ email: string; passwordHash: string; signedOut: boolean } | undefined> {
  const read = (signedOut: Knex.Raw) => db('users').where({ id: userId }).first('email', 'password_hash', signedOut);
  const row = await read(db.raw('EXISTS (SELECT 1 FROM ended_sessions WHERE session_id = ?) AS signed_out', [sessionId ?? null])).catch((err) => {
    // a read model from before sign-outs were kept, served while the release that keeps them rebuilds it
    if (err.code === UNDEFINED_TABLE) return read(db.raw('false AS signed_out'));
    throw err;
  });
  return row && { email: row.email, passwordHash: row.password_hash, signedOut: row.signed_out };
}
