/**
 * The first transaction id the log's readers must not pass yet (SQL, one value): every event written
 * by a transaction below it is committed (or was rolled back), and none can still appear there.
 *
 * It is the oldest transaction still running in this database, or the snapshot's xmax when none is.
 * Transactions of other databases on the same PostgreSQL server cannot write this log, so they do not
 * count: one left open there (another application's batch, a psql session) held every projection and
 * process manager of the service back until it ended, since transaction ids are server-wide. A
 * transaction counts as another database's only when it can be seen to be one: pg_stat_activity shows
 * another role's backend_xid only to a superuser or a member of pg_read_all_stats, so without that the
 * readers wait for every running transaction of the server, as `pg_snapshot_xmin` would.
 * (backend_xid is a 32-bit xid; the snapshot's are xid8 of the same epoch, compared modulo 2^32.)
 */
export const LOG_HORIZON_SQL = `(
  SELECT COALESCE(min(x), pg_snapshot_xmax(pg_current_snapshot()))
    FROM pg_snapshot_xip(pg_current_snapshot()) AS x
   WHERE (x::text::bigint % 4294967296) NOT IN (
     SELECT backend_xid::text::bigint FROM pg_stat_activity
      WHERE backend_xid IS NOT NULL AND datname IS DISTINCT FROM current_database()
     UNION ALL
     SELECT transaction::text::bigint FROM pg_prepared_xacts WHERE database <> current_database()
   )
)`;
