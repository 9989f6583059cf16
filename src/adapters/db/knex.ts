import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { migrationSource } from '../../migrations/source.js';

// int8 (bigint), numeric: keep exactness as strings by default, but counts from COUNT(*) are int8 and
// we never exceed 2^53 for them, so parse int8 to number. xid8 (oid 5069) stays a string: positions
// are read as bigint explicitly.
pg.types.setTypeParser(20, (v) => Number(v));

export type Db = Knex;

export function createDb(connectionString: string, options: { pool?: number; synchronousCommit?: boolean } = {}): Db {
  return knexFactory({
    client: 'pg',
    // Asynchronous commit is per connection (a session setting), so a pool that wants it gets its own.
    connection: options.synchronousCommit === false ? { connectionString, options: '-c synchronous_commit=off' } : connectionString,
    pool: { min: 0, max: options.pool ?? 10 },
    migrations: { migrationSource, tableName: 'knex_migrations' },
  });
}

export async function migrate(db: Db): Promise<void> {
  await db.migrate.latest();
}
