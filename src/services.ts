import type { Logger } from 'pino';
import type { Config } from './config/env.js';
import type { Infrastructure } from './infrastructure.js';
import type { SharedServices } from './shared-services.js';
import { getOrCreateSecret } from './adapters/db/secrets.js';
import { assertAllowedTarget } from './adapters/webhooks/ssrf-guard.js';
import { createAccountCommands } from './commands/accounts.js';
import { createApiKeyCommands } from './commands/api-keys.js';
import { createKeyFailureThrottle } from './commands/key-failure-throttle.js';
import { createSignInThrottle } from './commands/sign-in-throttle.js';
import { createIdentityCommands } from './commands/identities.js';
import { createSendEmail } from './commands/send-email.js';
import { createSendSms } from './commands/send-sms.js';
import { createTemplateCommands } from './commands/templates.js';
import { createWebhookCommands } from './commands/webhooks.js';
import { createApp } from './http/app.js';
import { createApiRoutes } from './http/api-routes.js';
import { createHealthRoutes, createReadinessRoutes } from './http/routes/health.js';
import { createMetricsRoutes } from './http/routes/metrics.js';
import { createDashboard } from './http/dashboard.js';
import { createSandboxOutbox } from './read-models/sandbox-outbox.js';
import { addSandboxOptOuts } from './adapters/sms/sandbox.js';
import { createIdempotencyGate } from './http/idempotency.js';
import { createIdempotentRequests } from './commands/idempotency.js';
import { createPgIdempotencyStore } from './adapters/db/idempotency-store.js';
import { createAuthenticator } from './http/auth.js';
import { createJwtIssuer } from './adapters/session/jwt.js';
import { ensureProjection } from './projections/generations.js';
import { projections } from './projections/registry.js';
import { logFollower } from './projections/lag.js';
import { createSnsMessageVerifier } from './adapters/sns-verify/verify-sns-message.js';
import { createEngagementCommands } from './commands/engagement.js';
import { createWebhookDeliveryCommands } from './commands/webhook-deliveries.js';
import { createContactCommands } from './commands/contacts.js';
import { createPersonalDataExport } from './commands/personal-data-export.js';
import { createSuppressionListCommands } from './commands/suppression-list.js';
import { createMessageQueries } from './read-models/messages.js';
import { createMessageHistory } from './commands/replay.js';
import { createMessageDetail } from './commands/message-detail.js';
import { createCancelMessage } from './commands/cancel-message.js';
import { createMessageCountQueries } from './read-models/message-counts.js';
import { createChangeCursors, createMessageChanges } from './commands/message-changes.js';
import { createChangeNotifier } from './projections/change-notifier.js';
import { createCampaignCommands } from './commands/campaigns.js';
import { createCampaignTurns } from './adapters/db/campaign-turns.js';
import { createAuditQueries } from './read-models/audit.js';
import { DELIVER_WEBHOOK_JOB } from './domain/webhooks/delivery.js';
import { forgetDeliveryBodies } from './adapters/db/webhook-delivery-copies.js';
import { SEND_JOB } from './process-managers/send-messages.js';
import { forgetPersonMessageCopies, forgetPersonParkedProviderEvents } from './adapters/db/message-copies.js';
import { scopesOfAccount } from './domain/idempotency/record.js';
import { keyHashesOf } from './read-models/api-keys.js';

/** Everything the API role needs, wired from configuration, infrastructure and the services it shares with the workers (src/application.ts). */
export async function createApiServices(config: Config, infra: Infrastructure, logger: Logger, shared: SharedServices) {
  const { db, eventStore, counters, privacy } = infra;
  const { personOf } = privacy;
  const { waitFor, suppressions, ingest, optOuts } = shared;
  const { emailProviderFor } = shared.providers;
  // An API process may be the first on a new database: without this, every request reading a read
  // model answered 500 (a missing table) until a worker had started and created them.
  for (const projection of projections) await ensureProjection(db, projection);
  const jwt = createJwtIssuer(await getOrCreateSecret(db, 'jwt', config.JWT_SECRET));
  const linkSecret = await getOrCreateSecret(db, 'links');
  // Metrics and readiness: the read models this role serves, the queues it feeds.
  const { observability } = shared;
  observability.follow({ followers: projections.map((p) => logFollower('projection', p)), queues: [SEND_JOB, DELIVER_WEBHOOK_JOB] });

  const accounts = createAccountCommands({ eventStore, db, waitFor, jwt });
  const apiKeys = createApiKeyCommands({ eventStore, db, waitFor });
  const identities = createIdentityCommands({ eventStore, db, waitFor, emailProviderFor });
  const templates = createTemplateCommands({ eventStore, db, waitFor });
  const webhooks = createWebhookCommands({
    eventStore,
    db,
    waitFor,
    checkTarget: (url) => assertAllowedTarget(url, { allowPrivateTargets: config.WEBHOOK_ALLOW_PRIVATE_TARGETS }),
  });
  // BASE_URL is read at each send so a test server can learn its port after it started listening.
  const keyFailures = createKeyFailureThrottle({
    limiters: infra.limiters,
    perIp: config.API_KEY_FAILURES_PER_IP,
    windowSeconds: config.THROTTLE_WINDOW_SECONDS,
  });
  const signIns = createSignInThrottle({
    limiters: infra.limiters,
    limits: {
      perAccountAndIp: config.LOGIN_FAILURES_PER_ACCOUNT_AND_IP,
      perAccount: config.LOGIN_FAILURES_PER_ACCOUNT,
      perIp: config.LOGIN_FAILURES_PER_IP,
      windowSeconds: config.THROTTLE_WINDOW_SECONDS,
    },
  });
  const authenticator = createAuthenticator({ db, jwt, keyFailures });
  const sendEmail = createSendEmail({
    eventStore,
    db,
    counters,
    keys: { check: authenticator.checkKey, accept: authenticator.acceptKey },
    attachmentStore: infra.attachmentStore,
    linkSecret,
    baseUrl: () => config.BASE_URL,
    metrics: observability.metrics,
    personOf,
  });
  const sendSms = createSendSms({ eventStore, counters, provider: config.SMS_PROVIDER, personOf, metrics: observability.metrics });
  const idempotencyStore = createPgIdempotencyStore(db);
  const contacts = createContactCommands({
    eventStore,
    db,
    waitFor,
    personOf,
    streams: shared.personStreams,
    keys: privacy.store,
    forget: privacy.keys.forget,
    forgetCopies: async (accountId, person, address) => {
      await forgetPersonMessageCopies(db, accountId, person);
      await forgetPersonParkedProviderEvents(db, person, address);
      await forgetDeliveryBodies(db, [person, address], undefined, infra.queue);
      await idempotencyStore.forgetAddress(scopesOfAccount(accountId, await keyHashesOf(db, accountId)), address);
    },
  });
  const engagement = createEngagementCommands({ eventStore, suppressions, db, linkSecret });
  const deliveries = createWebhookDeliveryCommands({ eventStore, db, queue: infra.queue, sender: shared.webhookSender, waitFor });
  const messages = createMessageQueries({ db });
  const sns = createSnsMessageVerifier({ certUrlPattern: config.SNS_CERT_URL_PATTERN });
  if (!config.SNS_TOPIC_ARNS) logger.warn('SNS_TOPIC_ARNS is not set: SNS messages from any topic are accepted, and anyone can publish to a topic of their own');

  const routes = createApiRoutes({
    health: { db, eventStore },
    readiness: { readiness: observability.readiness },
    metrics: { exposition: observability.exposition, token: config.METRICS_TOKEN },
    auth: {
      accounts,
      signIns,
      allowSignup: config.ALLOW_SIGNUP,
      secureCookies: config.BASE_URL.startsWith('https:'),
      publicOrigin: () => new URL(config.BASE_URL).origin,
    },
    apiKeys: { apiKeys },
    settings: { accounts, emailProviderFor, smsProvider: shared.providers.smsProviderFor(config.SMS_PROVIDER) },
    identities: { identities },
    templates: { templates, sendEmail },
    suppressions: { suppressions, list: createSuppressionListCommands({ db, eventStore, personOf, suppressions, waiter: shared.waiter }) },
    webhooks: { webhooks },
    sendEmail: { sendEmail },
    sendBatch: { sendEmail },
    sendSms: { sendSms },
    contacts: { contacts, exportPersonalData: createPersonalDataExport({ db, eventStore, personOf }) },
    messageChanges: {
      changes: createMessageChanges({ db, notifier: createChangeNotifier({ db, logger }), cursors: createChangeCursors(await getOrCreateSecret(db, 'changes-cursor')) }),
    },
    messages: { messages, detail: createMessageDetail({ messages, eventStore, waitFor }), history: createMessageHistory({ eventStore }), cancel: createCancelMessage({ db, eventStore, waitFor }), counts: createMessageCountQueries({ db }) },
    campaigns: { campaigns: createCampaignCommands({ db, eventStore, waitFor, campaignStats: messages.campaignStats, turns: createCampaignTurns(db), clock: shared.clock }) },
    webhookDeliveries: { deliveries },
    audit: { audit: createAuditQueries({ db }) },
    smsOptOuts: { optOuts },
    sandbox: {
      outbox: createSandboxOutbox({ db }),
      ...(config.SMS_PROVIDER === 'sandbox' ? { simulateSmsOptOut: (phone: string) => addSandboxOptOuts(db, [phone]) } : {}),
    },
    tracking: { engagement, linkSecret, logger },
    providerEvents: {
      ingest,
      sns,
      linkDigest: privacy.master.digest,
      snsTopicArns: config.SNS_TOPIC_ARNS,
      postmarkCredentials:
        config.POSTMARK_WEBHOOK_USER && config.POSTMARK_WEBHOOK_PASSWORD
          ? { user: config.POSTMARK_WEBHOOK_USER, password: config.POSTMARK_WEBHOOK_PASSWORD }
          : undefined,
    },
  });
  const app = createApp({
    routes,
    authenticate: authenticator.authenticate,
    presentKey: authenticator.presentKey,
    screenError: authenticator.screenError,
    logger,
    baseUrl: config.BASE_URL,
    dashboard: createDashboard(),
    trustProxy: config.TRUST_PROXY,
    observeHttp: observability.prometheus.observeHttp,
    idempotency: createIdempotencyGate({
      requests: createIdempotentRequests({ store: idempotencyStore }),
      onError: (err) => logger.error({ err }, 'an Idempotency-Key record could not be written or its claim renewed'),
    }),
  });
  return { app, accounts, apiKeys, identities, templates, suppressions, webhooks, deliveries, ingest, optOuts, jwt, waitFor, linkSecret };
}

/**
 * The worker role's HTTP surface: liveness, readiness and metrics only (a worker serves no API), so
 * that its provider calls, webhook attempts and the lag of what it builds can be scraped and probed.
 */
export function createOperationsApp(config: Config, infra: Infrastructure, logger: Logger, shared: SharedServices) {
  const { observability } = shared;
  return createApp({
    routes: [
      ...createHealthRoutes({ db: infra.db, eventStore: infra.eventStore }),
      ...createReadinessRoutes({ readiness: observability.readiness }),
      ...createMetricsRoutes({ exposition: observability.exposition, token: config.METRICS_TOKEN }),
    ],
    authenticate: async () => undefined,
    logger,
    baseUrl: config.BASE_URL,
    trustProxy: config.TRUST_PROXY,
    observeHttp: observability.prometheus.observeHttp,
  });
}
