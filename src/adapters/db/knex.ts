import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { migrationSource, RENAMED_MIGRATIONS } from '../../migrations/source.js';
import { StartupError } from '../../startup-error.js';

// int8 (bigint), numeric: keep exactness as strings by default, but counts from COUNT(*) are int8 and
// we never exceed 2^53 for them, so parse int8 to number. xid8 (oid 5069) stays a string: positions
// are read as bigint explicitly.
pg.types.setTypeParser(20, (v) => Number(v));

/** PostgreSQL's code for a relation that does not exist: a read model's table a newer release adds, before its rebuild. */
export const UNDEFINED_TABLE = '42P01';

export type Db = Knex;

/** Session settings of every connection of a pool (a pool that wants them gets its own). */
export type SessionSettings = Partial<Record<'synchronous_commit' | 'enable_seqscan', 'on' | 'off'>>;

/** Where knex's own warnings go (a connection lost, an acquire failed): the service's log, not bare text on stdout among its JSON lines. */
export type DbLogger = { warn(message: string): void; error(message: string): void };

export function createDb(connectionString: string, options: { pool?: number; settings?: SessionSettings; logger?: DbLogger } = {}): Db {
  const settings = Object.entries(options.settings ?? {}).map(([name, value]) => `-c ${name}=${value}`);
  const logger = options.logger;
  return knexFactory({
    client: 'pg',
    connection: settings.length > 0 ? { connectionString, options: settings.join(' ') } : connectionString,
    pool: { min: 0, max: options.pool ?? 10 },
    migrations: { migrationSource, tableName: 'knex_migrations' },
    ...(logger
      ? { log: { warn: (m: unknown) => logger.warn(String(m)), error: (m: unknown) => logger.error(String(m)), deprecate: (m: unknown) => logger.warn(String(m)), debug: () => {} } }
      : {}),
  });
}

/** the advisory lock every process takes to migrate: one key for the whole schema */
const MIGRATION_LOCK = 'courier-ledger:migrate';

/**
 * Migrates to the latest schema, one process at a time. Any number of processes may start together
 * on an empty or older database: knex's own lock lives in a table that the first migration run
 * creates, so two runs on an empty database raced to create it (a duplicate key in pg_type), and one
 * process failed to start. A session advisory lock held on a connection of its own serialises them;
 * whoever comes second finds nothing left to do.
 */
export async function migrate(db: Db): Promise<void> {
  const connections = db.client as unknown as PgConnections;
  const connection = await connections.acquireConnection();
  try {
    await connection.query('SELECT pg_advisory_lock(hashtext($1))', [MIGRATION_LOCK]);
    try {
      await recordRenamedMigrations(connection);
      await db.migrate.latest();
    } catch (err) {
      // knex's words for migrations recorded in the database that this code does not have
      const missing = /the following files are missing: (.*)$/.exec((err as Error).message ?? '');
      if (missing) {
        throw new StartupError(
          `This database was migrated by a newer version of Courier Ledger (migrations ${missing[1]} are not in this one): start that version or a newer one. Going back to an older version needs the backup taken before the upgrade.`,
          { cause: err },
        );
      }
      throw err;
    } finally {
      await connection.query('SELECT pg_advisory_unlock(hashtext($1))', [MIGRATION_LOCK]);
    }
  } finally {
    await connections.releaseConnection(connection);
  }
}

async function recordRenamedMigrations(connection: pg.PoolClient): Promise<void> {
  const { rows } = await connection.query<{ exists: boolean }>("SELECT to_regclass('knex_migrations') IS NOT NULL AS exists");
  if (!rows[0].exists) return;
  for (const [old, name] of Object.entries(RENAMED_MIGRATIONS)) {
    await connection.query('UPDATE knex_migrations SET name = $2 WHERE name = $1', [old, name]);
  }
}

interface PgConnections {
  acquireConnection(): Promise<pg.PoolClient>;
  releaseConnection(connection: pg.PoolClient): Promise<unknown>;
}

/**
 * Runs `text` (parameters $1..$n) on one of the pool's connections straight through node-postgres,
 * prepared under `name` on each connection (planned once there) when a name is given. For the API key
 * lookup every keyed request makes, where knex's raw() (its binding rewrite and query machinery, an
 * unnamed statement planned on every call) cost the authenticated no-op route a tenth of its rate:
 * 0.67–0.71× of the unauthenticated route through raw(), 0.70–0.73× unnamed through this, 0.76–0.80×
 * prepared (four interleaved runs each); and for the send admission, whose planning cost PostgreSQL
 * more than running it. Prepare only statements over tables that grow slowly, or on connections that
 * plan index scans only: a cached plan is replanned when ANALYZE updates the table's statistics, not
 * as the table grows before that.
 */
export async function query<R>(db: Db, text: string, values: unknown[], name?: string): Promise<R[]> {
  const connections = db.client as unknown as PgConnections;
  const connection = await connections.acquireConnection();
  try {
    if (!name) return (await connection.query<R & pg.QueryResultRow>({ text, values })).rows;
    try {
      return (await connection.query<R & pg.QueryResultRow>({ name: preparedName(connection, name), text, values })).rows;
    } catch (err) {
      if ((err as { code?: string }).code !== CACHED_PLAN_CHANGED_TYPE) throw err;
      // A rebuild re-pointed a view at a table whose columns have other types: this connection's
      // statement can no longer run, so it prepares the text again under a new name.
      renamed.set(connection, { ...renamed.get(connection), [name]: (renamed.get(connection)?.[name] ?? 0) + 1 });
      return (await connection.query<R & pg.QueryResultRow>({ name: preparedName(connection, name), text, values })).rows;
    }
  } finally {
    await connections.releaseConnection(connection);
  }
}

/** "cached plan must not change result type" (feature_not_supported) */
const CACHED_PLAN_CHANGED_TYPE = '0A000';
const renamed = new WeakMap<pg.PoolClient, Record<string, number>>();
const preparedName = (connection: pg.PoolClient, name: string) => {
  const version = renamed.get(connection)?.[name];
  return version ? `${name}_${version}` : name;
};

/** An ILIKE pattern matching `text` anywhere, its own `%`, `_` and `\` taken literally. */
export const containsPattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
