import type { Logger } from 'pino';
import type { Config } from './config/env.js';
import type { Infrastructure } from './infrastructure.js';
import { getOrCreateSecret } from './adapters/db/secrets.js';
import { assertAllowedTarget } from './adapters/webhooks/ssrf-guard.js';
import { createAccountCommands } from './commands/accounts.js';
import { createApiKeyCommands } from './commands/api-keys.js';
import { createKeyFailureThrottle } from './commands/key-failure-throttle.js';
import { createSignInThrottle } from './commands/sign-in-throttle.js';
import { createIdentityCommands } from './commands/identities.js';
import type { WaitForProjection } from './commands/read-your-writes.js';
import { createSendEmail } from './commands/send-email.js';
import { createSendSms } from './commands/send-sms.js';
import { createSuppressionCommands } from './commands/suppressions.js';
import { createTemplateCommands } from './commands/templates.js';
import { createWebhookCommands } from './commands/webhooks.js';
import { createApp } from './http/app.js';
import { createIdempotencyGate } from './http/idempotency.js';
import { createIdempotentRequests } from './commands/idempotency.js';
import { createPgIdempotencyStore } from './adapters/db/idempotency-store.js';
import { createAuthenticator } from './http/auth.js';
import { createJwtIssuer } from './http/jwt.js';
import { createApiKeyRoutes } from './http/routes/api-keys.js';
import { createAuthRoutes } from './http/routes/auth.js';
import { createHealthRoutes } from './http/routes/health.js';
import { createIdentityRoutes } from './http/routes/identities.js';
import { createSendBatchRoutes } from './http/routes/send-batch.js';
import { createSendEmailRoutes } from './http/routes/send-email.js';
import { createSendSmsRoutes } from './http/routes/send-sms.js';
import { createSettingsRoutes } from './http/routes/settings.js';
import { createSuppressionRoutes } from './http/routes/suppressions.js';
import { createTemplateRoutes } from './http/routes/templates.js';
import { createWebhookRoutes } from './http/routes/webhooks.js';
import { createProjectionWaiter } from './projections/waiter.js';
import { ensureProjection } from './projections/generations.js';
import { projections } from './projections/registry.js';
import { createSnsMessageVerifier } from './adapters/sns-verify/verify-sns-message.js';
import { createWebhookSender } from './adapters/webhooks/http-sender.js';
import { createEngagementCommands } from './commands/engagement.js';
import { createProviderEventIngest } from './commands/ingest-provider-events.js';
import { createSmsOptOutSync } from './commands/sync-sms-optouts.js';
import { createWebhookDeliveryCommands } from './commands/webhook-deliveries.js';
import { createProviderEventRoutes } from './http/routes/provider-events.js';
import { createSmsOptOutRoutes } from './http/routes/sms-optouts.js';
import { createTrackingRoutes } from './http/routes/tracking.js';
import { createWebhookDeliveryRoutes } from './http/routes/webhook-deliveries.js';
import { createContactCommands } from './commands/contacts.js';
import { createContactRoutes } from './http/routes/contacts.js';
import { createMessageQueries } from './commands/messages-query.js';
import { createCancelMessage } from './commands/cancel-message.js';
import { createMessageRoutes } from './http/routes/messages.js';
import { createChangeCursors, createMessageChanges } from './commands/message-changes.js';
import { createMessageChangeRoutes } from './http/routes/message-changes.js';
import { createChangeNotifier } from './projections/change-notifier.js';
import { createProviderRegistry } from './providers.js';
import { emailProviderUnavailable } from './adapters/email/index.js';
import { forgetSandboxMessages } from './adapters/email/sandbox.js';
import { forgetDeliveryBodies } from './process-managers/webhook-fanout.js';

const READ_YOUR_WRITES_TIMEOUT_MS = 10_000;

/** Everything the API role needs, wired from configuration and infrastructure. */
export async function createApiServices(config: Config, infra: Infrastructure, logger: Logger) {
  const { db, eventStore, counters, privacy } = infra;
  const { personOf } = privacy;
  // An API process may be the first on a new database: without this, every request reading a read
  // model answered 500 (a missing table) until a worker had started and created them.
  for (const projection of projections) await ensureProjection(db, projection);
  const jwt = createJwtIssuer(await getOrCreateSecret(db, 'jwt', config.JWT_SECRET));
  const linkSecret = await getOrCreateSecret(db, 'links');
  const waiter = createProjectionWaiter({ db });
  const waitFor: WaitForProjection = (name, position) =>
    position ? waiter.waitFor(name, position, READ_YOUR_WRITES_TIMEOUT_MS) : Promise.resolve();
  const { emailProviderFor, smsProviderFor } = createProviderRegistry({ db, config });

  const accounts = createAccountCommands({ eventStore, db, waitFor, jwt });
  const apiKeys = createApiKeyCommands({ eventStore, db, waitFor });
  const identities = createIdentityCommands({ eventStore, db, waitFor, emailProviderFor });
  const templates = createTemplateCommands({ eventStore, db, waitFor });
  const suppressions = createSuppressionCommands({ eventStore, db, waitFor, personOf });
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
    linkSecret,
    baseUrl: () => config.BASE_URL,
    personOf,
  });
  const sendSms = createSendSms({ eventStore, counters, provider: config.SMS_PROVIDER, personOf });
  const contacts = createContactCommands({
    eventStore,
    db,
    waitFor,
    personOf,
    keys: privacy.store,
    forget: privacy.keys.forget,
    forgetCopies: async (accountId, person) => {
      await forgetSandboxMessages(db, accountId, person);
      await forgetDeliveryBodies(db, person);
    },
  });
  const engagement = createEngagementCommands({ eventStore, suppressions });
  const ingest = createProviderEventIngest({ eventStore, db, suppressions, actor: 'provider', logger });
  const sender = createWebhookSender({ timeoutMs: config.WEBHOOK_TIMEOUT_MS, allowPrivateTargets: config.WEBHOOK_ALLOW_PRIVATE_TARGETS });
  const deliveries = createWebhookDeliveryCommands({ eventStore, db, queue: infra.queue, sender, waitFor });
  const optOuts = createSmsOptOutSync({ db, provider: smsProviderFor(config.SMS_PROVIDER), suppressions });
  const sns = createSnsMessageVerifier({ certUrlPattern: config.SNS_CERT_URL_PATTERN });
  if (!config.SNS_TOPIC_ARNS) logger.warn('SNS_TOPIC_ARNS is not set: SNS messages from any topic are accepted, and anyone can publish to a topic of their own');

  const routes = [
    ...createHealthRoutes({ db, eventStore }),
    ...createAuthRoutes({ accounts, signIns, allowSignup: config.ALLOW_SIGNUP }),
    ...createApiKeyRoutes({ apiKeys }),
    ...createSettingsRoutes({ accounts, emailProviderUnavailable: (kind) => emailProviderUnavailable(kind, config) }),
    ...createIdentityRoutes({ identities }),
    ...createTemplateRoutes({ templates }),
    ...createSuppressionRoutes({ suppressions }),
    ...createWebhookRoutes({ webhooks }),
    ...createSendEmailRoutes({ sendEmail }),
    ...createSendBatchRoutes({ sendEmail }),
    ...createSendSmsRoutes({ sendSms }),
    ...createContactRoutes({ contacts }),
    // before /api/messages/:id, which would take "changes" for an id
    ...createMessageChangeRoutes({
      changes: createMessageChanges({ db, notifier: createChangeNotifier({ db, logger }), cursors: createChangeCursors(await getOrCreateSecret(db, 'changes-cursor')) }),
    }),
    ...createMessageRoutes({ messages: createMessageQueries({ db, eventStore }), cancel: createCancelMessage({ db, eventStore, waitFor }) }),
    ...createWebhookDeliveryRoutes({ deliveries }),
    ...createSmsOptOutRoutes({ optOuts }),
    ...createTrackingRoutes({ engagement, linkSecret, logger }),
    ...createProviderEventRoutes({
      ingest,
      sns,
      snsTopicArns: config.SNS_TOPIC_ARNS,
      postmarkCredentials:
        config.POSTMARK_WEBHOOK_USER && config.POSTMARK_WEBHOOK_PASSWORD
          ? { user: config.POSTMARK_WEBHOOK_USER, password: config.POSTMARK_WEBHOOK_PASSWORD }
          : undefined,
    }),
  ];
  const app = createApp({
    routes,
    authenticate: authenticator.authenticate,
    presentKey: authenticator.presentKey,
    screenError: authenticator.screenError,
    logger,
    baseUrl: config.BASE_URL,
    trustProxy: config.TRUST_PROXY,
    idempotency: createIdempotencyGate({
      requests: createIdempotentRequests({ store: createPgIdempotencyStore(db) }),
      onError: (err) => logger.error({ err }, 'an Idempotency-Key record could not be written'),
    }),
  });
  return { app, accounts, apiKeys, identities, templates, suppressions, webhooks, deliveries, ingest, optOuts, jwt, waitFor, linkSecret };
}
