import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { createDb, migrate, type Db } from '../../src/adapters/db/knex.js';
import { postgresServerUrl } from './postgres-server.js';

export interface TestDatabase {
  /** connection string of the fresh database */
  url: string;
  /** a knex instance on it, migrated */
  db: Db;
  drop(): Promise<void>;
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** A fresh, migrated database of its own for one test file or suite; `drop()` removes it. */
export async function createTestDatabase(options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  const server = await postgresServerUrl();
  const name = `t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = withDatabase(server, name);
  const db = createDb(url);
  if (options.migrate !== false) await migrate(db);
  return {
    url,
    db,
    async drop() {
      await db.destroy();
      const c = new pg.Client({ connectionString: server });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    },
  };
}
