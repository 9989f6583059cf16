import type { Db } from '../db/knex.js';

export interface LongTransaction {
  pid: number;
  /** null for a transaction of a session this role may not see the details of */
  database: string | null;
  user: string | null;
  state: string | null;
  seconds: number;
  query: string | null;
}

/**
 * The oldest transaction of this database that holds a transaction id and has been open for more than
 * `olderThanMs`, if any. The PostgreSQL event store's readers take no event committed after the oldest
 * running transaction of this database (log-horizon.ts): one left open (an operator's `BEGIN; UPDATE …`
 * in psql) holds every projection and process manager back, so sends and webhooks stand still without
 * an error. Another database's, on the same server, holds them back only where this role cannot see
 * it (pg_read_all_stats), and is not named either.
 */
export async function findLongTransaction(db: Db, olderThanMs: number): Promise<LongTransaction | undefined> {
  const { rows } = await db.raw(
    `SELECT pid, datname AS database, usename AS "user", state, left(query, 200) AS query,
            extract(epoch FROM now() - xact_start)::float8 AS seconds
       FROM pg_stat_activity
      WHERE backend_xid IS NOT NULL AND datname = current_database() AND xact_start < now() - make_interval(secs => ?)
      ORDER BY xact_start
      LIMIT 1`,
    [olderThanMs / 1000],
  );
  return rows[0];
}
