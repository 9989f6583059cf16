import { createDb, type Db } from './knex.js';
import { badRequest, tooManyRequests } from '../../domain/errors.js';

/**
 * Daily send caps, exact under any concurrency: each send takes a slot with one conditional upsert per
 * scope (`count < cap`), in one transaction, so 200 concurrent sends against a cap of 20 get exactly 20
 * slots and a refused per-account slot gives the per-key slot back. Days are UTC calendar days.
 */
export interface CapReservation {
  release(): Promise<void>;
}

const utcDay = (now: Date) => now.toISOString().slice(0, 10);

async function take(trx: Db, scope: string, day: string, cap: number): Promise<boolean> {
  const { rows } = await trx.raw(
    `INSERT INTO send_counters (scope, day, count) VALUES (?, ?, 1)
     ON CONFLICT (scope, day) DO UPDATE SET count = send_counters.count + 1
       WHERE send_counters.count < ?
     RETURNING count`,
    [scope, day, cap],
  );
  return rows.length > 0 && cap > 0;
}

async function releaseSlots(db: Db, scopes: string[], day: string): Promise<void> {
  await db('send_counters').whereIn('scope', scopes).andWhere({ day }).andWhere('count', '>', 0).decrement('count', 1);
}

/**
 * The counters get a pool of their own whose sessions commit asynchronously. Every send of an account
 * takes the same counter row, and a synchronous commit holds that row's lock through the WAL flush,
 * which would make the account's sends take turns at disk speed. Nothing is lost that matters: a send
 * is accepted only once its event is appended with a synchronous commit, and that flush writes the
 * earlier counter commit to disk too; a server crash can only lose increments of sends that were never
 * accepted (and would have been given back).
 */
export function createSendCounters(connectionString: string) {
  const db = createDb(connectionString, { pool: 4, synchronousCommit: false });
  return {
    close: () => db.destroy(),

    async reserve(opts: { accountId: string; accountCap: number; apiKeyId?: string | null; keyLimit?: number | null; now?: Date }): Promise<CapReservation> {
      const day = utcDay(opts.now ?? new Date());
      const scopes: string[] = [];
      if (!(opts.apiKeyId && opts.keyLimit != null)) {
        // One scope: the conditional upsert is atomic by itself, no transaction (and no row lock held
        // across round trips, which would serialise every send of the account).
        if (!(await take(db, `account:${opts.accountId}`, day, opts.accountCap))) throw tooManyRequests('Daily send limit reached');
        scopes.push(`account:${opts.accountId}`);
        return { release: () => releaseSlots(db, scopes, day) };
      }
      await db.transaction(async (trx) => {
        if (opts.apiKeyId && opts.keyLimit != null) {
          if (!(await take(trx, `key:${opts.apiKeyId}`, day, opts.keyLimit))) {
            throw badRequest('daily send limit reached for this API key');
          }
          scopes.push(`key:${opts.apiKeyId}`);
        }
        if (!(await take(trx, `account:${opts.accountId}`, day, opts.accountCap))) {
          throw tooManyRequests('Daily send limit reached');
        }
        scopes.push(`account:${opts.accountId}`);
      });
      return {
        // A send that took its slots but could not be recorded gives them back.
        release: () => releaseSlots(db, scopes, day),
      };
    },

    async used(scope: string, now = new Date()): Promise<number> {
      const row = await db('send_counters').where({ scope, day: utcDay(now) }).first('count');
      return row?.count ?? 0;
    },
  };
}
export type SendCounters = ReturnType<typeof createSendCounters>;
