import type { Config } from './config/env.js';
import type { Db } from './adapters/db/knex.js';
import { createEmailProvider } from './adapters/email/index.js';
import { createSmsProvider } from './adapters/sms/index.js';
import type { EmailProviderKind } from './domain/accounts/account.js';
import type { EmailProvider } from './ports/email-provider.js';
import type { SmsProvider } from './ports/sms-provider.js';

/** Provider clients by kind, created on first use and shared (each account picks its email provider). */
export function createProviderRegistry(deps: { db: Db; config: Config }) {
  const email = new Map<EmailProviderKind, EmailProvider>();
  const sms = new Map<'sns' | 'sandbox', SmsProvider>();
  return {
    emailProviderFor(kind: EmailProviderKind): EmailProvider {
      if (!email.has(kind)) email.set(kind, createEmailProvider(kind, deps));
      return email.get(kind)!;
    },
    smsProviderFor(kind: 'sns' | 'sandbox'): SmsProvider {
      if (!sms.has(kind)) sms.set(kind, createSmsProvider(kind, deps));
      return sms.get(kind)!;
    },
  };
}
export type ProviderRegistry = ReturnType<typeof createProviderRegistry>;
