import type { Logger } from 'pino';
import type { Config } from './config/env.js';
import { openInfrastructure, type Infrastructure } from './infrastructure.js';
import { createWebhookSender } from './adapters/webhooks/http-sender.js';
import { createProviderEventIngest } from './commands/ingest-provider-events.js';
import type { WaitForProjection } from './commands/read-your-writes.js';
import { createSuppressionCommands } from './commands/suppressions.js';
import { createSmsOptOutSync } from './commands/sync-sms-optouts.js';
import { createProjectionWaiter } from './projections/waiter.js';
import { createProviderRegistry } from './providers.js';
import { createObservability } from './observability.js';
import { createApiServices } from './services.js';
import { startWorkers } from './workers.js';
import { startWorkersThread } from './workers-thread.js';

export type Role = 'all' | 'api' | 'worker';
export const ROLES: readonly Role[] = ['all', 'api', 'worker'];

const READ_YOUR_WRITES_TIMEOUT_MS = 10_000;

/**
 * What both roles use, built once per process: in the `all` role the API and the workers share one
 * provider registry (one SDK client per provider), one waiter and one ingest.
 */
export function createSharedServices(config: Config, infra: Infrastructure, logger: Logger, clock: () => Date = () => new Date()) {
  const { db, eventStore } = infra;
  const providers = createProviderRegistry({ db, config });
  const waiter = createProjectionWaiter({ db });
  const waitFor: WaitForProjection = (name, position) =>
    position ? waiter.waitFor(name, position, READ_YOUR_WRITES_TIMEOUT_MS) : Promise.resolve();
  const suppressions = createSuppressionCommands({ eventStore, db, waitFor, personOf: infra.privacy.personOf });
  const ingest = createProviderEventIngest({ eventStore, db, suppressions, actor: 'provider', logger, personOf: infra.privacy.personOf });
  const optOuts = createSmsOptOutSync({ db, provider: providers.smsProviderFor(config.SMS_PROVIDER), suppressions });
  const webhookSender = createWebhookSender({ timeoutMs: config.WEBHOOK_TIMEOUT_MS, allowPrivateTargets: config.WEBHOOK_ALLOW_PRIVATE_TARGETS });
  // one set of metrics per process, whichever roles it runs; each role says what it follows
  const observability = createObservability({ db, eventStore, queue: infra.queue, logInDatabase: !config.EVENTSTORE_URL });
  return { providers, waiter, waitFor, suppressions, ingest, optOuts, webhookSender, observability, clock };
}
export type SharedServices = ReturnType<typeof createSharedServices>;

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
  const opened = await openInfrastructure(config);
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
