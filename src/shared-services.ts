import type { Logger } from 'pino';
import type { Config } from './config/env.js';
import type { Infrastructure } from './infrastructure.js';
import { createWebhookSender } from './adapters/webhooks/http-sender.js';
import { createSyncRuns } from './adapters/db/sync-runs.js';
import { createProviderEventIngest } from './commands/ingest-provider-events.js';
import type { WaitForProjection } from './commands/read-your-writes.js';
import { createSuppressionCommands } from './commands/suppressions.js';
import { createPersonStreams } from './commands/person-streams.js';
import { createSmsOptOutSync } from './commands/sync-sms-optouts.js';
import { createProjectionWaiter } from './projections/waiter.js';
import { createProviderRegistry } from './providers.js';
import { createObservability } from './observability.js';

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
  const personStreams = createPersonStreams({ eventStore, personOf: infra.privacy.personOf, namedByAddress: infra.streamsNamedByAddress });
  const suppressions = createSuppressionCommands({ eventStore, db, waitFor, personOf: infra.privacy.personOf, streams: personStreams });
  const ingest = createProviderEventIngest({ eventStore, db, suppressions, actor: 'provider', logger, personOf: infra.privacy.personOf, streams: personStreams });
  const optOuts = createSmsOptOutSync({ db, provider: providers.smsProviderFor(config.SMS_PROVIDER), suppressions, runs: createSyncRuns(db), waiter });
  const webhookSender = createWebhookSender({ timeoutMs: config.WEBHOOK_TIMEOUT_MS, allowPrivateTargets: config.WEBHOOK_ALLOW_PRIVATE_TARGETS });
  // one set of metrics per process, whichever roles it runs; each role says what it follows
  const observability = createObservability({ db, eventStore, queue: infra.queue, logInDatabase: !config.EVENTSTORE_URL });
  return { providers, waiter, waitFor, personStreams, suppressions, ingest, optOuts, webhookSender, observability, clock };
}
export type SharedServices = ReturnType<typeof createSharedServices>;
