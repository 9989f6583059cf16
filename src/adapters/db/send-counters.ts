import { createDb, query, type Db, type DbLogger } from './knex.js';
import { capRefusal, type CapOutcome } from '../../domain/messages/send-admission.js';
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
 * The counters one send takes a slot of on `day`: its key's only when it has a key with a cap, its
 * account's always.
 */
export function capScopes(day: string, accountId: string, apiKeyId: string | null, keyCap: number | null): CapScopes {
  return {
    day,
    keyScope: apiKeyId !== null && keyCap !== null ? KEY_SCOPE_PREFIX + apiKeyId : null,
    accountScope: ACCOUNT_SCOPE_PREFIX + accountId,
  };
}

/** One send's request for slots: its counters and their caps. */
export interface SlotRequest extends CapScopes {
  /** ignored when keyScope is null */
  keyCap: number | null;
  accountCap: number;
}

const RESERVE_SLOTS = 'SELECT reserve_send_slots($1::date, $2::text[], $3::int[], $4::text[], $5::int[]) AS outcomes';

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
export function createSendCounters(connectionString: string, options: { pool?: number; logger?: DbLogger } = {}) {
  // Index scans only: the statements of a send (the send facts of src/read-models/send-facts.ts, reserve_send_slots) run prepared here, and a
  // plan cached while a table was small would otherwise keep scanning it whole as it grows.
  const db = createDb(connectionString, { pool: options.pool ?? 4, settings: { synchronous_commit: 'off', enable_seqscan: 'off' }, logger: options.logger });

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

  /** The slots a send took, to give back if it cannot be recorded. */
  function taken(scopes: CapScopes): CapReservation {
    const held = scopes.keyScope ? [scopes.keyScope, scopes.accountScope] : [scopes.accountScope];
    return { release: () => releaseSlots(held, scopes.day) };
  }

  /** The answer to one send of reserve_send_slots' outcome: the cap rule's error, or slots to give back. */
  function settle(outcome: string, scopes: CapScopes): CapReservation {
    const refusal = capRefusal(outcome as CapOutcome);
    if (refusal) throw refusal;
    return taken(scopes);
  }

  // Every send's reservation, email and SMS alike: the ones asking together take their slots in one
  // call, decided in arrival order under the counters' row locks. A send asks only once every other
  // rule admitted it, so a refused send never takes a slot.
  const reservations = slotBatches<SlotRequest, CapOutcome>(async (conn, day, items) => {
    const [row] = await query<{ outcomes: CapOutcome[] }>(conn, RESERVE_SLOTS, [
      day,
      items.map((r) => r.keyScope),
      items.map((r) => (r.keyScope ? r.keyCap : null)),
      items.map((r) => r.accountScope),
      items.map((r) => r.accountCap),
    ], 'reserve_send_slots');
    return row.outcomes;
  });

  /**
   * The statements that read a send's facts (src/read-models/send-facts.ts), run on the counters'
   * connections for their settings, the sends arriving together in one statement.
   */
  function factBatches<T, R>(run: (db: Db, items: T[]) => Promise<R[]>): GroupCommit<T, R> {
    return createGroupCommit<T, R>((items) => run(db, items));
  }

  return {
    close: () => db.destroy(),
    slotBatches,
    settle,
    taken,
    factBatches,
    /** Takes one send's slots, or answers which cap is reached (then nothing is taken). */
    reserve: (request: SlotRequest) => reservations.add(request),

    async used(scope: string, now = new Date()): Promise<number> {
      const row = await db('send_counters').where({ scope, day: utcDay(now) }).first('count');
      return row?.count ?? 0;
    },
  };
}
export type SendCounters = ReturnType<typeof createSendCounters>;
