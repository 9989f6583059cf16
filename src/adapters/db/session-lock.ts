import type { Db } from './knex.js';

/**
 * Runs `work` holding the session advisory lock `name`, after whoever holds it now. The lock lives on a
 * connection of its own, so it goes with the process should that die mid-work; a connection whose
 * unlock failed is thrown away rather than handed back to the pool still holding it.
 */
export async function whileLocked<T>(db: Db, name: string, work: () => Promise<T>): Promise<T> {
  const conn = await db.client.acquireConnection();
  try {
    await conn.query('SELECT pg_advisory_lock(hashtext($1))', [name]);
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
