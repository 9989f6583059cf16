import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

export interface SpawnOptions {
  /** variables taken out of the inherited environment (CI sets DATABASE_URL and REDIS_URL) */
  unset?: string[];
  /** how long to wait for /healthz (30 s, a worker 90 s); a first embedded-PostgreSQL boot runs initdb */
  startTimeoutMs?: number;
  /** node options for this process only (`--import` of a test hook) */
  nodeArgs?: string[];
  /** run another copy of the project, from its own directory (as `npm start` there would) */
  root?: string;
  /**
   * through `npm run start` (`start:api`, `start:worker`), as users and containers run it: `process`
   * is then npm's, which must pass a SIGTERM on to the service (through tsx, which relays it)
   */
  npmScript?: boolean;
}

export interface SpawnedServer {
  baseUrl: string;
  process: ChildProcess;
  /** everything the process wrote to stdout so far */
  stdout(): string;
  /** stdout and stderr interleaved, for failure messages */
  output(): string;
  /** how the process ended, once it has */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM, then waits for the exit */
  stop(): Promise<void>;
}

// The node flags `npm start` runs the service with (package.json's start script), so a spawned server
// is the service as users run it.
const startScript: string = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).scripts.start;
const SERVICE_NODE_FLAGS = startScript.split(' ').filter((arg) => arg.startsWith('--'));

/**
 * The encryption key of test deployments (test apps and the processes spawned beside them on their
 * databases): one deployment, one key. Not a secret: test data only.
 */
export const TEST_ENCRYPTION_KEY = Buffer.alloc(32, 7).toString('base64');

/**
 * The Redis key prefix of one test's processes: they share its database, and no other test's. With
 * the default prefix, every process that inherited CI's REDIS_URL shared one BullMQ queue per job
 * name: a worker of one test took another test's jobs, found no such side effect in its own database
 * and finished them, and the other test's delivery waited for good (the two test streams run at once).
 */
export function redisPrefixFor(databaseUrl: string): string {
  const name = new URL(databaseUrl).pathname.slice(1).replace(/[^\w.-]/g, '_');
  return `test-${name || 'default'}`.slice(0, 64);
}

/**
 * Servers still running when this process exits, however it exits, are stopped with it: a bench that
 * crashed on an unhandled rejection never reached its `stop()`, and its server ran on for hours beside
 * the next runs (an `all` server without DATABASE_URL with its own embedded PostgreSQL). SIGTERM, so
 * that such a server still stops its PostgreSQL.
 */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGTERM');
});

/** Another server process (`src/main.ts <role>`) on the same database, for cross-process tests. */
export async function spawnServer(role: 'api' | 'worker' | 'all', env: Record<string, string>, options: SpawnOptions = {}): Promise<SpawnedServer> {
  // A port found free can be taken before the child binds it (two servers started at once may even
  // be given the same one): a port of our choosing that turns out taken is chosen again.
  for (let attempt = 1; ; attempt++) {
    try {
      return await spawnOnce(role, env, options);
    } catch (err) {
      const ours = !env.PORT && !(role === 'worker' && env.WORKER_PORT);
      if (!ours || attempt === 3 || !/Port \d+ is already in use/.test((err as Error).message)) throw err;
    }
  }
}

async function spawnOnce(role: 'api' | 'worker' | 'all', env: Record<string, string>, options: SpawnOptions): Promise<SpawnedServer> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const main = options.root ? join(options.root, 'src', 'main.ts') : fileURLToPath(new URL('../../src/main.ts', import.meta.url));
  // A worker answers on WORKER_PORT once it has started (its queue, read models and managers running):
  // the wait below is for that, so that a test's clock starts with a worker that can do its work.
  const workerPort = role === 'worker' ? Number(env.WORKER_PORT ?? port) : undefined;
  const childEnv: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'silent', PORT: String(port), ENCRYPTION_KEY: TEST_ENCRYPTION_KEY, ...(workerPort ? { WORKER_PORT: String(workerPort) } : {}), ...env };
  for (const name of options.unset ?? []) delete childEnv[name];
  if (childEnv.REDIS_URL && !env.REDIS_PREFIX && childEnv.DATABASE_URL) childEnv.REDIS_PREFIX = redisPrefixFor(childEnv.DATABASE_URL);
  const nodeArgs = [...SERVICE_NODE_FLAGS, ...(process.env.SPAWN_NODE_ARGS ?? '').split(' ').filter(Boolean), ...(options.nodeArgs ?? [])];
  const [command, args] = options.npmScript
    ? ['npm', ['run', '--silent', role === 'all' ? 'start' : `start:${role}`]]
    : [process.execPath, [...nodeArgs, '--import', 'tsx', main, role]];
  const child = spawn(command, args, {
    env: childEnv,
    cwd: options.root ?? fileURLToPath(new URL('../..', import.meta.url)),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let output = '';
  child.stdout!.on('data', (d) => {
    stdout += d;
    output += d;
  });
  child.stderr!.on('data', (d) => (output += d));
  running.add(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    }),
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  // a worker restarted in a fault test may start while PostgreSQL is away: it retries, and is waited for longer
  const deadline = Date.now() + (options.startTimeoutMs ?? (role === 'worker' ? 90_000 : 30_000));
  try {
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`server exited: ${output}`);
      try {
        if ((await fetch(`http://127.0.0.1:${workerPort ?? port}/healthz`)).ok) break;
      } catch {
        /* not yet listening */
      }
      if (Date.now() > deadline) throw new Error(`server did not start: ${output}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  } catch (err) {
    // A half-started server would outlive the test (and keep an embedded PostgreSQL running).
    child.kill('SIGTERM');
    throw err;
  }
  return {
    baseUrl,
    process: child,
    stdout: () => stdout,
    output: () => output,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
