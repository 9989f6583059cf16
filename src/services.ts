import type { Logger } from 'pino';
import type { Config } from './config/env.js';
import type { Infrastructure } from './infrastructure.js';
import { getOrCreateSecret } from './adapters/db/secrets.js';
import { createEmailProvider } from './adapters/email/index.js';
import { createAccountCommands } from './commands/accounts.js';
import { createApiKeyCommands } from './commands/api-keys.js';
import { createIdentityCommands } from './commands/identities.js';
import type { WaitForProjection } from './commands/read-your-writes.js';
import type { EmailProviderKind } from './domain/accounts/account.js';
import { createApp } from './http/app.js';
import { createAuthenticator } from './http/auth.js';
import { createJwtIssuer } from './http/jwt.js';
import { createApiKeyRoutes } from './http/routes/api-keys.js';
import { createAuthRoutes } from './http/routes/auth.js';
import { createHealthRoutes } from './http/routes/health.js';
import { createIdentityRoutes } from './http/routes/identities.js';
import { createSettingsRoutes } from './http/routes/settings.js';
import type { EmailProvider } from './ports/email-provider.js';
import { createProjectionWaiter } from './projections/waiter.js';

const READ_YOUR_WRITES_TIMEOUT_MS = 10_000;

/** Everything the API role needs, wired from configuration and infrastructure. */
export async function createApiServices(config: Config, infra: Infrastructure, logger: Logger) {
  const { db, eventStore } = infra;
  const jwtSecret = await getOrCreateSecret(db, 'jwt', config.JWT_SECRET);
  const jwt = createJwtIssuer(jwtSecret);
  const waiter = createProjectionWaiter({ db });
  const waitFor: WaitForProjection = (name, position) =>
    position ? waiter.waitFor(name, position, READ_YOUR_WRITES_TIMEOUT_MS) : Promise.resolve();

  const providers = new Map<EmailProviderKind, EmailProvider>();
  const emailProviderFor = (kind: EmailProviderKind) => {
    if (!providers.has(kind)) providers.set(kind, createEmailProvider(kind, { db, config }));
    return providers.get(kind)!;
  };

  const accounts = createAccountCommands({ eventStore, db, waitFor, jwt });
  const apiKeys = createApiKeyCommands({ eventStore, db, waitFor });
  const identities = createIdentityCommands({ eventStore, db, waitFor, emailProviderFor });

  const routes = [
    ...createHealthRoutes({ db, eventStore }),
    ...createAuthRoutes({ accounts, allowSignup: config.ALLOW_SIGNUP }),
    ...createApiKeyRoutes({ apiKeys }),
    ...createSettingsRoutes({ accounts }),
    ...createIdentityRoutes({ identities }),
  ];
  const app = createApp({ routes, authenticate: createAuthenticator({ db, jwt }), logger, baseUrl: config.BASE_URL });
  return { app, accounts, apiKeys, identities, jwt, waitFor };
}
