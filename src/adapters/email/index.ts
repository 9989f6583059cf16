import type { Config } from '../../config/env.js';
import type { Db } from '../db/knex.js';
import type { EmailProviderKind } from '../../domain/accounts/account.js';
import type { EmailProvider } from '../../ports/email-provider.js';
import { createPostmarkEmailProvider } from './postmark.js';
import { createSandboxEmailProvider } from './sandbox.js';
import { createSesEmailProvider } from './ses.js';

export function createEmailProvider(kind: EmailProviderKind, deps: { db: Db; config: Config }): EmailProvider {
  const { config } = deps;
  switch (kind) {
    case 'ses':
      return createSesEmailProvider({ region: config.AWS_REGION, endpoint: config.AWS_ENDPOINT_URL_SESV2 });
    case 'postmark':
      if (!config.POSTMARK_SERVER_TOKEN) throw new Error('POSTMARK_SERVER_TOKEN is not set: the postmark provider cannot be used');
      return createPostmarkEmailProvider({ serverToken: config.POSTMARK_SERVER_TOKEN, apiUrl: config.POSTMARK_API_URL });
    case 'sandbox':
      return createSandboxEmailProvider({ db: deps.db });
  }
}
