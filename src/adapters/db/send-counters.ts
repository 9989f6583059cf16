import type { Knex } from 'knex';
import { createDb } from './knex.js';
import { badRequest, tooManyRequests } from '../../domain/errors.js';
import { createGroupCommit } from '../../group-commit.js';

/**
 * Daily send caps, exact under any concurrency: a send takes a slot of its key's cap (when the key has
 * one) and of its account's, or neither, under the counters' row locks, so 200 concurrent sends against
 * a cap of 20 get exactly 20 slots. Days are UTC calendar days.
 */
export interface CapReservation {
  release(): Promise<void>;
}

const utcDay = (now: Date) => now.toISOString().slice(0, 10);

interface Reservation {
  day: string;
  keyScope: string | null;
  keyCap: number | null;
  accountScope: string;
  accountCap: number;
}

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
  const db = createDb(connectionString, { pool: 4, synchronousCommit: false });

  const reservations = createGroupCommit<Reservation, string>(async (items) => {
    const outcomes: string[] = new Array(items.length);
    // a batch that straddles midnight UTC is one call per day
    for (const day of new Set(items.map((r) => r.day))) {
      const indexes = items.flatMap((r, i) => (r.day === day ? [i] : []));
      const of = (key: keyof Reservation) => indexes.map((i) => items[i][key]) as Knex.Value;
      const { rows } = await db.raw('SELECT reserve_send_slots(?::date, ?::text[], ?::int[], ?::text[], ?::int[]) AS outcomes', [
        day,
        of('keyScope'),
        of('keyCap'),
        of('accountScope'),
        of('accountCap'),
      ]);
      indexes.forEach((i, k) => (outcomes[i] = rows[0].outcomes[k]));
    }
    return outcomes;
  });

  async function releaseSlots(scopes: string[], day: string): Promise<void> {
    // locked in scope order, like reserve_send_slots, so the two never deadlock
    await db.raw(
      `UPDATE send_counters c SET count = c.count - 1
       FROM (SELECT scope FROM send_counters WHERE day = ?::date AND scope = ANY (?::text[]) AND count > 0 ORDER BY scope FOR UPDATE) l
       WHERE c.scope = l.scope AND c.day = ?::date`,
      [day, scopes, day],
    );
  }

  return {
    close: () => db.destroy(),

    async reserve(opts: { accountId: string; accountCap: number; apiKeyId?: string | null; keyLimit?: number | null; now?: Date }): Promise<CapReservation> {
      const day = utcDay(opts.now ?? new Date());
      const keyScope = opts.apiKeyId && opts.keyLimit != null ? `key:${opts.apiKeyId}` : null;
      const accountScope = `account:${opts.accountId}`;
      const outcome = await reservations.add({ day, keyScope, keyCap: keyScope ? opts.keyLimit! : null, accountScope, accountCap: opts.accountCap });
      if (outcome === 'key') throw badRequest('daily send limit reached for this API key');
      if (outcome === 'account') throw tooManyRequests('Daily send limit reached');
      const scopes = keyScope ? [keyScope, accountScope] : [accountScope];
      // A send that took its slots but could not be recorded gives them back.
      return { release: () => releaseSlots(scopes, day) };
    },

    async used(scope: string, now = new Date()): Promise<number> {
      const row = await db('send_counters').where({ scope, day: utcDay(now) }).first('count');
      return row?.count ?? 0;
    },
  };
}
export type SendCounters = ReturnType<typeof createSendCounters>;
