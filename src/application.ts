import type { Logger } from 'pino';
import type { Config } from './config/env.js';
import { openInfrastructure, type Infrastructure } from './infrastructure.js';
import { atMostEvery } from './logger.js';
import { createApiServices } from './services.js';
import { startWorkers } from './workers.js';
import { startWorkersThread } from './workers-thread.js';
import { createSharedServices, type SharedServices } from './shared-services.js';

export type Role = 'all' | 'api' | 'worker';
export const ROLES: readonly Role[] = ['all', 'api', 'worker'];

export interface Application {
  role: Role;
  config: Config;
  infra: Infrastructure;
  logger: Logger;
  shared: SharedServices;
  /** the API role's services (not in the `worker` role) */
  api?: Awaited<ReturnType<typeof createApiServices>>;
  /** what the first boot created: the default account and its owner (not in the `worker` role) */
  boot?: Awaited<ReturnType<Awaited<ReturnType<typeof createApiServices>>['accounts']['bootstrap']>>;
  /** stops the workers and closes the stores; the HTTP server, if any, is the caller's */
  stop(): Promise<void>;
}

export interface ApplicationOptions {
  config: Config;
  logger: Logger;
  /**
   * Replaces parts of the opened infrastructure (a test's queue with short timings, an event store
   * that crashes on cue); `stop` still closes what was opened.
   */
  adapt?: (infra: Infrastructure) => Infrastructure;
  /** the time campaigns go by (their schedule, the daily cap's day); tests move it */
  clock?: () => Date;
  /**
   * The `all` role's workers on a thread of their own (npm start), configured from `env` with the
   * database this thread opened; `onExit` hears of that thread ending by itself. Without it the
   * workers share this thread's event loop (the tests' in-process services).
   */
  workersThread?: { env: NodeJS.ProcessEnv; onExit(err: Error): void };
}

/**
 * The one composition root: opens the stores (migrated), then wires the roles asked for. `all` runs
 * the workers and the API in one process; `api` and `worker` one role each, any number of each on
 * one PostgreSQL (+ Redis). The main entry point, the tests and the bench all start the service here.
 * A failure part-way stops what had started before it is rethrown.
 */
export async function createApplication(role: Role, options: ApplicationOptions): Promise<Application> {
  const { config, logger } = options;
  // a queue whose Redis is away errs at every reconnect: one line every 30 s says so (with how many since)
  const onQueueError = atMostEvery<unknown>(30_000, (err, leftOut) => logger.warn({ err, similarErrorsSince: leftOut }, 'job queue error (it retries by itself)'));
  const opened = await openInfrastructure(config, { onQueueError, logger });
  const infra = options.adapt ? options.adapt(opened) : opened;
  let workers: { stop(): Promise<void> } | undefined;
  const stop = async () => {
    await workers?.stop();
    await opened.close();
  };
  try {
    const shared = createSharedServices(config, infra, logger, options.clock);
    if (role === 'all' && options.workersThread) {
      const { env, onExit } = options.workersThread;
      const thread = await startWorkersThread({ ...env, DATABASE_URL: infra.databaseUrl }, onExit);
      shared.observability.join(thread.observability);
      workers = thread;
    } else if (role !== 'api') workers = await startWorkers(config, infra, logger, shared);
    if (role === 'worker') return { role, config, infra, logger, shared, stop };
    const api = await createApiServices(config, infra, logger, shared);
    const boot = await api.accounts.bootstrap(config.ADMIN_EMAIL, config.ADMIN_PASSWORD);
    return { role, config, infra, logger, shared, api, boot, stop };
  } catch (err) {
    await stop().catch(() => {});
    throw err;
  }
}
