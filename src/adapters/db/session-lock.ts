import type { Db } from './knex.js';

/** PostgreSQL's code for a lock not had within lock_timeout. */
export const LOCK_NOT_AVAILABLE = '55P03';

/**
 * Runs `work` holding the session advisory lock `name`, after whoever holds it now (waiting at most
 * `waitMs` when given: then the error has code LOCK_NOT_AVAILABLE). The lock lives on a connection of
 * its own, so it goes with the process should that die mid-work; a connection whose unlock failed is
 * thrown away rather than handed back to the pool still holding it.
 */
export async function whileLocked<T>(db: Db, name: string, work: () => Promise<T>, options: { waitMs?: number } = {}): Promise<T> {
  const conn = await db.client.acquireConnection();
  try {
    if (options.waitMs === undefined) await conn.query('SELECT pg_advisory_lock(hashtext($1))', [name]);
    else {
      // in a transaction of its own, so that the wait's bound is gone with it
      await conn.query(`BEGIN; SET LOCAL lock_timeout = ${Math.max(1, Math.round(options.waitMs))}`);
      try {
        await conn.query('SELECT pg_advisory_lock(hashtext($1))', [name]);
      } finally {
        await conn.query('COMMIT');
      }
    }
    try {
      return await work();
    } finally {
      await conn.query('SELECT pg_advisory_unlock(hashtext($1))', [name]).catch((err: unknown) => {
        conn.__knex__disposed = err;
      });
    }
  } finally {
    await db.client.releaseConnection(conn);
  }
}
