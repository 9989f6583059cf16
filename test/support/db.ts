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

/** Per server, a database migrated once for this process, that each migrated test database is copied from. */
const templates = new Map<string, Promise<string>>();

async function adminQuery(server: string, sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/**
 * Copying a migrated database costs a fraction of migrating a new one, paid by every file that starts
 * the service. Nobody connects to the template after its migration (not even autovacuum: connections
 * are refused), since PostgreSQL copies only a database nobody uses.
 */
function migratedTemplate(server: string): Promise<string> {
  let template = templates.get(server);
  if (!template) {
    template = (async () => {
      const name = `t_template_${process.pid}_${randomBytes(4).toString('hex')}`;
      await adminQuery(server, `CREATE DATABASE "${name}"`);
      const db = createDb(withDatabase(server, name));
      try {
        await migrate(db);
      } finally {
        await db.destroy();
      }
      await adminQuery(server, `ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS false`);
      return name;
    })();
    templates.set(server, template);
  }
  return template;
}

/** Drops this process's templates (the root hook's, once every file has run). */
export async function dropTemplates(): Promise<void> {
  for (const [server, template] of templates) {
    const name = await template.catch(() => undefined);
    if (name) await adminQuery(server, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => {});
  }
  templates.clear();
}

/** A fresh, migrated database of its own for one test file or suite; `drop()` removes it. */
export async function createTestDatabase(options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  const server = await postgresServerUrl();
  const name = `t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const migrated = options.migrate !== false;
  await adminQuery(server, migrated ? `CREATE DATABASE "${name}" TEMPLATE "${await migratedTemplate(server)}"` : `CREATE DATABASE "${name}"`);
  const url = withDatabase(server, name);
  const db = createDb(url);
  return {
    url,
    db,
    async drop() {
      await db.destroy();
      await adminQuery(server, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    },
  };
}
