import type { Config } from '../../config/env.js';
import type { Db } from '../db/knex.js';
import type { EmailProviderKind } from '../../domain/accounts/account.js';
import { ProviderError, type EmailProvider } from '../../ports/email-provider.js';
import { createPostmarkEmailProvider } from './postmark.js';
import { createSandboxEmailProvider } from './sandbox.js';
import { createSesEmailProvider } from './ses.js';

export function createEmailProvider(kind: EmailProviderKind, deps: { db: Db; config: Config }): EmailProvider {
  const { config } = deps;
  switch (kind) {
    case 'ses':
      return createSesEmailProvider({ region: config.AWS_REGION, endpoint: config.AWS_ENDPOINT_URL_SESV2 });
    case 'postmark':
      if (!config.POSTMARK_SERVER_TOKEN) return unconfigured('postmark', 'POSTMARK_SERVER_TOKEN is not set');
      return createPostmarkEmailProvider({ serverToken: config.POSTMARK_SERVER_TOKEN, apiUrl: config.POSTMARK_API_URL });
    case 'sandbox':
      return createSandboxEmailProvider({ db: deps.db });
  }
}

/**
 * A provider this deployment has no credentials for: every call fails with a final error naming the
 * missing setting (a message ends `failed` with it, instead of retrying something that cannot work).
 */
export function unconfigured(name: EmailProvider['name'], reason: string): EmailProvider {
  const fail = async (): Promise<never> => {
    throw new ProviderError(`${name} is not configured: ${reason}`, false, 'NotConfigured');
  };
  return { name, send: fail, createIdentity: fail, getIdentityStatus: fail, missingCredentials: async () => reason };
}
