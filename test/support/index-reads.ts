import type { Db } from '../../src/adapters/db/knex.js';

/**
 * Index entries read so far in this database (pg_stat_user_indexes.idx_tup_read), summed over the
 * indexes `where` selects. Other sessions report their counts on their own schedule, but always when
 * they end: this waits until every other session of the database has ended, so close the pools whose
 * reads are to be counted first.
 */
export async function indexEntriesRead(db: Db, where: string): Promise<number> {
  // Others' connections must have ended (a backend flushes its statistics as it exits); this pool's
  // other idle connections (migrating takes two) are not others.
  const pool = (db.client as unknown as { pool: { numUsed(): number; numFree(): number } }).pool;
  for (;;) {
    const { rows } = await db.raw(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`);
    if (rows[0].n <= pool.numUsed() + pool.numFree() - 1) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  await db.raw('SELECT pg_stat_clear_snapshot()');
  const { rows } = await db.raw(`SELECT coalesce(sum(idx_tup_read), 0)::bigint AS n FROM pg_stat_user_indexes WHERE ${where}`);
  return Number(rows[0].n);
}
