import type { Db } from './knex.js';

/** A finished SMS opt-out sync as recorded: what it added to each account, out of how many numbers. */
export interface RecordedSyncRun {
  syncedByAccount: Record<string, number>;
  total: number;
}

/** What a run added in all accounts together. */
export const syncedInAll = (run: RecordedSyncRun): number => Object.values(run.syncedByAccount).reduce((a, b) => a + b, 0);

/**
 * The SMS opt-out syncs, one at a time across every process (a session advisory lock), and their record
 * (`sms_optout_sync_runs`). `exclusively` runs `run` holding the lock; a caller that finds it held
 * waits for the holder and is answered with that run's record, so it need not list and suppress a
 * second time (only when that run failed does it run one itself).
 */
export function createSyncRuns(db: Db) {
  const lockKey = 'sms-optout-sync';
  async function begin(): Promise<number> {
    const [row] = await db('sms_optout_sync_runs').insert({}).returning('id');
    return row.id;
  }

  async function finish(id: number, recorded: RecordedSyncRun): Promise<void> {
    // The database clock, as the waiters compare with it.
    await db('sms_optout_sync_runs')
      .where({ id })
      .update({ finished_at: db.raw('clock_timestamp()'), synced: syncedInAll(recorded), synced_by_account: JSON.stringify(recorded.syncedByAccount), total: recorded.total });
  }

  /** `run` recorded as a sync run (begun, then finished with what it answers). */
  async function recorded(run: () => Promise<RecordedSyncRun>): Promise<RecordedSyncRun> {
    const id = await begin();
    const result = await run();
    await finish(id, result);
    return result;
  }

  return {
    async exclusively(run: () => Promise<RecordedSyncRun>): Promise<RecordedSyncRun> {
      const conn = await db.client.acquireConnection();
      const q = (sql: string) => conn.query(sql, [lockKey]);
      try {
        if ((await q('SELECT pg_try_advisory_lock(hashtext($1)) AS owned')).rows[0].owned) {
          try {
            return await recorded(run);
          } finally {
            await q('SELECT pg_advisory_unlock(hashtext($1))');
          }
        }
        // Someone else is syncing: wait for that run and report it.
        const { rows } = await conn.query('SELECT clock_timestamp() AS t');
        await q('SELECT pg_advisory_lock(hashtext($1))');
        try {
          const finished = await db('sms_optout_sync_runs').where('finished_at', '>=', rows[0].t).orderBy('id', 'desc').first('synced_by_account', 'total');
          return finished ? { syncedByAccount: finished.synced_by_account, total: finished.total } : await recorded(run);
        } finally {
          await q('SELECT pg_advisory_unlock(hashtext($1))');
        }
      } finally {
        await db.client.releaseConnection(conn);
      }
    },
  };
}
export type SyncRuns = ReturnType<typeof createSyncRuns>;
