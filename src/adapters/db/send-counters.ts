import { createDb, type Db } from './knex.js';
import { badRequest, tooManyRequests } from '../../domain/errors.js';
import { createGroupCommit, type GroupCommit } from '../../group-commit.js';

/**
 * Daily send caps, exact under any concurrency: a send takes a slot of its key's cap (when the key has
 * one) and of its account's, or neither, under the counters' row locks, so 200 concurrent sends against
 * a cap of 20 get exactly 20 slots. Days are UTC calendar days.
 */
export interface CapReservation {
  release(): Promise<void>;
}

/** The counters one send took a slot of, on the UTC day it was asked. */
export interface CapScopes {
  day: string;
  /** null when the send has no per-key cap */
  keyScope: string | null;
  accountScope: string;
}

export const utcDay = (now: Date) => now.toISOString().slice(0, 10);

/** Counter names: a key's cap counts under `key:<apiKeyId>`, an account's under `account:<accountId>`. */
export const KEY_SCOPE_PREFIX = 'key:';
export const ACCOUNT_SCOPE_PREFIX = 'account:';

/**
 * The columns `key_scope` and `account_scope` of an admission statement: the counters a send takes a
 * slot of, its key's only when it has a key with a cap, its account's always. The prefixes are
 * parameters (KEY_SCOPE_PREFIX, ACCOUNT_SCOPE_PREFIX).
 */
export const capScopesSql = (keyId: string, keyCap: string, accountId: string, keyPrefix: string, accountPrefix: string) =>
  `CASE WHEN ${keyId} IS NOT NULL AND ${keyCap} IS NOT NULL THEN ${keyPrefix}::text || ${keyId} END AS key_scope, ${accountPrefix}::text || ${accountId} AS account_scope`;

/**
 * The CTEs `admitted` and `reserved` of an admission statement (ADMIT_SENDS, ADMIT_SMS): the rows of
 * `checked` (i: arrival order, key_scope, key_cap, account_scope, daily_send_cap) that pass `admits`
 * take their slots in one call of reserve_send_slots on `day` (a parameter); `reserved` answers each
 * of them by `i`. A row refused by `admits` takes no slot.
 */
export const reserveAdmittedSql = (admits: string, day: string) => `admitted AS (
    SELECT array_agg(i ORDER BY i) AS i,
           array_agg(key_scope ORDER BY i) AS key_scopes, array_agg(CASE WHEN key_scope IS NOT NULL THEN key_cap END ORDER BY i) AS key_caps,
           array_agg(account_scope ORDER BY i) AS account_scopes, array_agg(daily_send_cap ORDER BY i) AS account_caps
    FROM checked WHERE ${admits}
  ),
  reserved AS (
    SELECT u.i, u.outcome
    FROM admitted, unnest(admitted.i, reserve_send_slots(${day}::date, key_scopes, key_caps, account_scopes, account_caps)) AS u (i, outcome)
  )`;

/**
 * The counters get a pool of their own whose sessions commit asynchronously. Every send of an account
 * takes the same counter row, and a synchronous commit holds that row's lock through the WAL flush,
 * which would make the account's sends take turns at disk speed. Nothing is lost that matters: a send
 * is accepted only once its event is appended with a synchronous commit, and that flush writes the
 * earlier counter commit to disk too; a server crash can only lose increments of sends that were never
 * accepted (and would have been given back).
 *
 * Sends arriving together reserve in one call of reserve_send_slots (migration 015), which decides
 * them in arrival order under the counters' row locks.
 */
export function createSendCounters(connectionString: string) {
  // Index scans only: the admission statements (ADMIT_SENDS, ADMIT_SMS) run prepared here, and a
  // plan cached while a table was small would otherwise keep scanning it whole as it grows.
  const db = createDb(connectionString, { pool: 4, settings: { synchronous_commit: 'off', enable_seqscan: 'off' } });

  /**
   * A group commit of statements that take slots (reserve_send_slots, alone or behind checks of their
   * own), run on the counters' connections with the items of one UTC day each: a batch that straddles
   * midnight is one statement per day. `run` answers the items of its day in their order.
   */
  function slotBatches<T extends { day: string }, R>(run: (db: Db, day: string, items: T[]) => Promise<R[]>): GroupCommit<T, R> {
    return createGroupCommit<T, R>(async (items) => {
      const results: R[] = new Array(items.length);
      for (const day of new Set(items.map((r) => r.day))) {
        const indexes = items.flatMap((r, i) => (r.day === day ? [i] : []));
        const answers = await run(db, day, indexes.map((i) => items[i]));
        indexes.forEach((i, k) => (results[i] = answers[k]));
      }
      return results;
    });
  }

  async function releaseSlots(scopes: string[], day: string): Promise<void> {
    // locked in scope order, like reserve_send_slots, so the two never deadlock
    await db.raw(
      `UPDATE send_counters c SET count = c.count - 1
       FROM (SELECT scope FROM send_counters WHERE day = ?::date AND scope = ANY (?::text[]) AND count > 0 ORDER BY scope FOR UPDATE) l
       WHERE c.scope = l.scope AND c.day = ?::date`,
      [day, scopes, day],
    );
  }

  /** The answer to one send of reserve_send_slots' outcome: the spec's error, or slots to give back. */
  function settle(outcome: string, scopes: CapScopes): CapReservation {
    if (outcome === 'key') throw badRequest('daily send limit reached for this API key');
    if (outcome === 'account') throw tooManyRequests('Daily send limit reached');
    const taken = scopes.keyScope ? [scopes.keyScope, scopes.accountScope] : [scopes.accountScope];
    // A send that took its slots but could not be recorded gives them back.
    return { release: () => releaseSlots(taken, scopes.day) };
  }

  return {
    close: () => db.destroy(),
    slotBatches,
    settle,

    async used(scope: string, now = new Date()): Promise<number> {
      const row = await db('send_counters').where({ scope, day: utcDay(now) }).first('count');
      return row?.count ?? 0;
    },
  };
}
export type SendCounters = ReturnType<typeof createSendCounters>;
