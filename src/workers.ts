import type { Logger } from 'pino';
import type { Config } from './config/env.js';
import type { Infrastructure } from './infrastructure.js';
import type { SharedServices } from './shared-services.js';
import { findLongTransaction } from './adapters/eventstore/long-transactions.js';
import { purgeFailedDeliveries } from './read-models/webhook-deliveries.js';
import { createDeliverWebhookHandler } from './jobs/deliver-webhook.js';
import { createSendMessageHandler } from './jobs/send-message.js';
import { createProcessManagerRunner } from './process-managers/runner.js';
import { CAMPAIGN_SEND_JOB, SEND_JOB, sendMessagesManager } from './process-managers/send-messages.js';
import { campaignFanoutManager, CAMPAIGN_FANOUT_JOB } from './process-managers/campaign-fanout.js';
import { createCampaignFanout } from './commands/campaign-fanout.js';
import { createCampaignTimers } from './commands/campaign-timers.js';
import { createSendEmail } from './commands/send-email.js';
import { createProviderRate } from './jobs/provider-rate.js';
import { createCampaignFanoutHandler } from './jobs/campaign-fanout.js';
import { createCampaignTurns } from './adapters/db/campaign-turns.js';
import { getOrCreateSecret } from './adapters/db/secrets.js';
import { startSideEffectSweeper } from './adapters/db/side-effects.js';
import { createWebhookFanoutManager } from './process-managers/webhook-fanout.js';
import { DELIVER_WEBHOOK_JOB } from './domain/webhooks/delivery.js';
import { webhookRetriesManager } from './process-managers/webhook-retries.js';
import { createProjectionRunner } from './projections/runner.js';
import { projections } from './projections/registry.js';
import { logFollower } from './projections/lag.js';
import { createRetention } from './commands/retention.js';
import { forgetExpiredCopies } from './adapters/db/message-copies.js';
import { every } from './periodic-task.js';


const LONG_TRANSACTION_CHECK_MS = 10_000;
const LONG_TRANSACTION_MS = 30_000;

async function warnOfLongTransaction(db: Infrastructure['db'], logger: Logger) {
  const open = await findLongTransaction(db, LONG_TRANSACTION_MS);
  if (open) logger.warn({ transaction: open }, 'a long-open transaction holds back every reader of the event log: sends, webhooks and read models wait until it ends');
}

/**
 * The worker role: projections (read models), process managers (side effects decided from the log),
 * the job handlers that perform them, and periodic housekeeping.
 */
export async function startWorkers(config: Config, infra: Infrastructure, logger: Logger, shared: SharedServices) {
  const { db, eventStore, queue } = infra;
  const { providers, waiter, ingest, optOuts } = shared;
  const { metrics } = shared.observability;

  const projectionRunner = createProjectionRunner({ db, eventStore, projections, logger });
  await projectionRunner.start();

  // 64 provider calls at once: their claims, provider records and results go out as shared
  // statements, so a larger batch costs less per send (a 20,000-send backlog: 10.6 s at 32, 7.6-8.1 s
  // at 128). During a burst the worker's share of the 2 cores is the API's loss: in five interleaved
  // pairs of the send bench, 64 against 32 delivered everything 2.7-3.1 s after the last 201 instead
  // of 5.2-6.1 s, at p99 38.9-41.5 against 36.5-44.6 ms and 6 % fewer sends/s; 128 kept up with the
  // API but took its p99 to 52-62 ms.
  const sendMessage = createSendMessageHandler({ db, eventStore, queue, attachmentStore: infra.attachmentStore, personOf: infra.privacy.personOf, ...providers, retryDelaysMs: config.PROVIDER_RETRY_DELAYS_MS, searchSettleMs: config.PROVIDER_SEARCH_SETTLE_MS, sesSendEvents: { enabled: config.SES_SEND_EVENTS, settleMs: config.SES_SEND_SETTLE_MS }, providerRate: createProviderRate({ db, limiters: infra.limiters }), leaseMs: config.SIDE_EFFECT_LEASE_MS, logger, metrics, recordReports: (reports) => ingest.ingest(reports) });
  await queue.work(SEND_JOB, sendMessage as never, { concurrency: 64 });
  // Campaign messages get a quarter of the hands: transactional sends keep theirs during a fan-out.
  await queue.work(CAMPAIGN_SEND_JOB, sendMessage as never, { concurrency: 16 });

  // The fan-out queues a campaign's messages as a send by the campaign's creator would.
  const campaignSends = createSendEmail({ eventStore: infra.bulk.eventStore, db, counters: infra.bulk.counters, attachmentStore: infra.attachmentStore, personOf: infra.privacy.personOf, linkSecret: await getOrCreateSecret(db, 'links'), baseUrl: () => config.BASE_URL, metrics });
  const fanout = createCampaignFanout({ db, eventStore, sendEmail: campaignSends, clock: shared.clock, stepSize: config.CAMPAIGN_STEP_SIZE });
  await queue.work(CAMPAIGN_FANOUT_JOB, createCampaignFanoutHandler({ db, queue, fanout, turns: createCampaignTurns(db), leaseMs: config.SIDE_EFFECT_LEASE_MS, logger }) as never, { concurrency: 4 });
  const campaignTimers = createCampaignTimers({ db, eventStore, clock: shared.clock });
  // 32 attempts at once across all endpoints: with attempts batched into shared statements, 16 left the
  // worker waiting on round trips (bench: 230 → 337 deliveries/s from 16 to 32, 365 at 64).
  await queue.work(
    DELIVER_WEBHOOK_JOB,
    createDeliverWebhookHandler({ db, eventStore, queue, sender: shared.webhookSender, retryDelaysMs: config.WEBHOOK_RETRY_DELAYS_MS, leaseMs: config.SIDE_EFFECT_LEASE_MS, logger, metrics }) as never,
    { concurrency: 32 },
  );

  const webhookFanout = createWebhookFanoutManager({ db, eventStore, streams: shared.personStreams, waitForReadModel: (name, position) => waiter.waitFor(name, position, 10_000) });
  const processManagers = [sendMessagesManager, webhookFanout, webhookRetriesManager, campaignFanoutManager];
  const managers = createProcessManagerRunner({ db, eventStore, queue, managers: processManagers, logger });
  // Metrics and readiness: the read models and process managers this role keeps up, the queues it works.
  shared.observability.follow({
    followers: [...projections.map((p) => logFollower('projection', p)), ...processManagers.map((m) => logFollower('process_manager', m))],
    queues: [SEND_JOB, CAMPAIGN_SEND_JOB, CAMPAIGN_FANOUT_JOB, DELIVER_WEBHOOK_JOB],
  });
  managers.start();
  const sweeper = startSideEffectSweeper({ db, queue, onError: (err) => logger.warn({ err }, 'side-effect sweep failed') });

  const retention = createRetention({
    db,
    eventStore,
    keys: infra.privacy.store,
    forgetAll: infra.privacy.keys.forgetAll,
    forgetCopies: (accountId, before) => forgetExpiredCopies(db, accountId, before),
  });
  const stops = [
    every(5_000, () => ingest.retryUnmatched(), logger, 'unmatched provider events'),
    every(config.SMS_OPTOUT_SYNC_INTERVAL_MS, () => optOuts.sync(), logger, 'sms opt-out sync', { soonAfterStart: true }),
    every(3_600_000, () => purgeFailedDeliveries(db), logger, 'purge failed webhook deliveries', { soonAfterStart: true }),
    every(config.CAMPAIGN_TIMER_INTERVAL_MS, campaignTimers, logger, 'campaign schedules and cap pauses'),
    // hourly, so a new day's cutoff applies within the hour after 00:00 UTC whenever the worker started
    every(3_600_000, () => retention.apply(), logger, 'message content retention', { soonAfterStart: true }),
  ];
  if (!config.EVENTSTORE_URL) stops.push(every(LONG_TRANSACTION_CHECK_MS, () => warnOfLongTransaction(db, logger), logger, 'long transaction check'));

  return {
    async stop() {
      await Promise.all(stops.map((stop) => stop()));
      sweeper.stop();
      await managers.stop();
      await projectionRunner.stop();
    },
  };
}
