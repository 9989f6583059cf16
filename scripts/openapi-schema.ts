/**
 * Writes the OpenAPI document of the routes the dashboard calls to web/openapi.json, from the route
 * declarations themselves (no server, no database): `openapi-typescript` turns it into the dashboard's
 * typed client. Route factories only close over their dependencies, so a stand-in that is never
 * called is enough to read the declarations.
 */
import { writeFileSync } from 'node:fs';
import { buildOpenApi } from '../src/http/openapi.js';
import type { AnyRoute } from '../src/http/route.js';
import { createApiKeyRoutes } from '../src/http/routes/api-keys.js';
import { createAuditRoutes } from '../src/http/routes/audit.js';
import { createAuthRoutes } from '../src/http/routes/auth.js';
import { createCampaignRoutes } from '../src/http/routes/campaigns.js';
import { createContactRoutes } from '../src/http/routes/contacts.js';
import { createIdentityRoutes } from '../src/http/routes/identities.js';
import { createMessageRoutes } from '../src/http/routes/messages.js';
import { createSandboxRoutes } from '../src/http/routes/sandbox.js';
import { createSettingsRoutes } from '../src/http/routes/settings.js';
import { createSmsOptOutRoutes } from '../src/http/routes/sms-optouts.js';
import { createSuppressionRoutes } from '../src/http/routes/suppressions.js';
import { createTemplateRoutes } from '../src/http/routes/templates.js';
import { createWebhookDeliveryRoutes } from '../src/http/routes/webhook-deliveries.js';
import { createWebhookRoutes } from '../src/http/routes/webhooks.js';

const unused = new Proxy({}, { get: () => () => { throw new Error('a route declaration called a dependency'); } }) as never;

const routes: AnyRoute[] = [
  ...createAuthRoutes({ accounts: unused, signIns: unused, allowSignup: false }),
  ...createApiKeyRoutes({ apiKeys: unused }),
  ...createSettingsRoutes({ accounts: unused, emailProviderUnavailable: unused }),
  ...createIdentityRoutes({ identities: unused }),
  ...createTemplateRoutes({ templates: unused }),
  ...createCampaignRoutes({ campaigns: unused }),
  ...createSuppressionRoutes({ suppressions: unused }),
  ...createWebhookRoutes({ webhooks: unused }),
  ...createContactRoutes({ contacts: unused }),
  ...createMessageRoutes({ messages: unused, cancel: unused, counts: unused }),
  ...createWebhookDeliveryRoutes({ deliveries: unused }),
  ...createSmsOptOutRoutes({ optOuts: unused }),
  ...createSandboxRoutes({ outbox: unused }),
  ...createAuditRoutes({ audit: unused }),
];

const out = new URL('../web/openapi.json', import.meta.url);
writeFileSync(out, JSON.stringify(buildOpenApi(routes, { title: 'Courier Ledger API', version: '0.1.0', baseUrl: '' }), null, 2));
