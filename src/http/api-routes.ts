import type { AnyRoute } from './route.js';
import { createApiKeyRoutes } from './routes/api-keys.js';
import { createAuditRoutes } from './routes/audit.js';
import { createAuthRoutes } from './routes/auth.js';
import { createCampaignRoutes } from './routes/campaigns.js';
import { createContactRoutes } from './routes/contacts.js';
import { createHealthRoutes, createReadinessRoutes } from './routes/health.js';
import { createIdentityRoutes } from './routes/identities.js';
import { createMessageChangeRoutes } from './routes/message-changes.js';
import { createMessageRoutes } from './routes/messages.js';
import { createMetricsRoutes } from './routes/metrics.js';
import { createProviderEventRoutes } from './routes/provider-events.js';
import { createSandboxRoutes } from './routes/sandbox.js';
import { createSendBatchRoutes } from './routes/send-batch.js';
import { createSendEmailRoutes } from './routes/send-email.js';
import { createSendSmsRoutes } from './routes/send-sms.js';
import { createSettingsRoutes } from './routes/settings.js';
import { createSmsOptOutRoutes } from './routes/sms-optouts.js';
import { createSuppressionRoutes } from './routes/suppressions.js';
import { createTemplateRoutes } from './routes/templates.js';
import { createTrackingRoutes } from './routes/tracking.js';
import { createWebhookDeliveryRoutes } from './routes/webhook-deliveries.js';
import { createWebhookRoutes } from './routes/webhooks.js';

/** Each route group's factory, in the order the API matches them. */
const GROUPS = {
  health: createHealthRoutes,
  readiness: createReadinessRoutes,
  metrics: createMetricsRoutes,
  auth: createAuthRoutes,
  apiKeys: createApiKeyRoutes,
  settings: createSettingsRoutes,
  identities: createIdentityRoutes,
  templates: createTemplateRoutes,
  suppressions: createSuppressionRoutes,
  webhooks: createWebhookRoutes,
  sendEmail: createSendEmailRoutes,
  sendBatch: createSendBatchRoutes,
  sendSms: createSendSmsRoutes,
  contacts: createContactRoutes,
  // before /api/messages/:id, which would take "changes" for an id
  messageChanges: createMessageChangeRoutes,
  messages: createMessageRoutes,
  campaigns: createCampaignRoutes,
  webhookDeliveries: createWebhookDeliveryRoutes,
  audit: createAuditRoutes,
  smsOptOuts: createSmsOptOutRoutes,
  sandbox: createSandboxRoutes,
  tracking: createTrackingRoutes,
  providerEvents: createProviderEventRoutes,
} as const;

type Groups = typeof GROUPS;
/** What each route group's factory takes. */
export type ApiRouteDeps = { [G in keyof Groups]: Parameters<Groups[G]>[0] };

/**
 * Every route of the API role, in one list: the server serves it (services.ts) and the OpenAPI
 * document the dashboard's typed client is generated from describes it (scripts/openapi-schema.ts).
 */
export function createApiRoutes(deps: ApiRouteDeps): AnyRoute[] {
  return (Object.keys(GROUPS) as (keyof Groups)[]).flatMap((g) => (GROUPS[g] as (d: unknown) => AnyRoute[])(deps[g]));
}
