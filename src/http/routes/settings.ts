import { z } from 'zod';
import type { AccountCommands } from '../../commands/accounts.js';
import { parsePhoneNumber } from '../../domain/sms/phone.js';
import { badRequest } from '../../domain/errors.js';
import { MAX_DAILY_SEND_CAP, MAX_RETENTION_DAYS, type EmailProviderKind } from '../../domain/accounts/account.js';
import type { EmailProvider } from '../../ports/email-provider.js';
import type { SmsProvider } from '../../ports/sms-provider.js';
import { defineRoute } from '../route.js';
import { accountOf, callerOf } from './principal-helpers.js';

const settingsSchema = z.object({
  dailySendCap: z.number().int().positive().max(MAX_DAILY_SEND_CAP),
  emailProvider: z.enum(['ses', 'postmark', 'sandbox']),
  tracking: z.enum(['service', 'provider', 'none']),
  providerRatePerSecond: z
    .number()
    .positive()
    .nullable()
    .meta({
      description:
        'The most provider calls a second for the account, across every worker; transactional sends are served first. Any positive number: below 1, one call every ceil(1/rate) seconds (at most one every 2^32 seconds, about 136 years); above 1, floor(rate) calls a second (at most 2,147,483,647). null: no limit',
      examples: [14, 0.005],
    }),
  // shown only when set; PATCH null unsets it (keep everything, the default)
  retentionDays: z.number().int().positive().max(MAX_RETENTION_DAYS).nullable().optional(),
});
const smsSchema = z.object({
  enabled: z.boolean(),
  originationNumber: z.string().max(32).nullable(),
  sandbox: z.boolean(),
  sandboxDestinations: z.array(z.string().max(32)).max(10),
});

const readinessSchema = z.object({ ready: z.boolean(), problem: z.string().nullable().meta({ description: 'what is missing, and how to set it' }) });
const providersSchema = z
  .object({
    email: z.object({ ses: readinessSchema, postmark: readinessSchema, sandbox: readinessSchema }),
    sms: readinessSchema.extend({ provider: z.string().meta({ description: "this server's SMS_PROVIDER" }) }),
  })
  .meta({
    examples: [
      {
        email: { ses: { ready: true, problem: null }, postmark: { ready: false, problem: 'POSTMARK_SERVER_TOKEN is not set' }, sandbox: { ready: true, problem: null } },
        sms: { provider: 'sns', ready: true, problem: null },
      },
    ],
  });

function e164(value: string, field: string): string {
  const parsed = parsePhoneNumber(value);
  if (!parsed) throw badRequest(`${field}: ${value} is not a valid phone number`);
  return parsed;
}

export function createSettingsRoutes(deps: {
  accounts: AccountCommands;
  /** this deployment's client of each email provider: whether it can call out is its own to say */
  emailProviderFor?: (kind: EmailProviderKind) => Pick<EmailProvider, 'missingCredentials'>;
  /** this deployment's SMS provider */
  smsProvider?: Pick<SmsProvider, 'name' | 'missingCredentials'>;
}) {
  const readiness = async (provider: Pick<EmailProvider, 'missingCredentials'> | undefined) => {
    const problem = (await provider?.missingCredentials?.()) ?? null;
    return { ready: problem === null, problem };
  };
  return [
    defineRoute({
      method: 'get',
      path: '/api/settings/providers',
      summary: "Whether this server can call each email provider and its SMS provider (their credentials), for the dashboard's warnings",
      tag: 'settings',
      auth: { kind: 'jwt' },
      responses: { 200: { description: '{email: {ses, postmark, sandbox}, sms}', schema: providersSchema } },
      async handler() {
        const kinds = ['ses', 'postmark', 'sandbox'] as const;
        const email = await Promise.all(kinds.map((kind) => readiness(deps.emailProviderFor?.(kind))));
        const sms = { provider: deps.smsProvider?.name ?? 'sandbox', ...(await readiness(deps.smsProvider)) };
        return { status: 200, body: { email: Object.fromEntries(kinds.map((kind, i) => [kind, email[i]])), sms } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/settings',
      summary: 'Account settings: daily send cap, email provider, tracking mode, retention of message content in days (null: kept)',
      tag: 'settings',
      auth: { kind: 'jwt' },
      responses: { 200: { description: 'The settings', schema: settingsSchema } },
      async handler({ principal }) {
        return { status: 200, body: await deps.accounts.getSettings(accountOf(principal)) };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/api/settings',
      summary: 'Change account settings',
      tag: 'settings',
      auth: { kind: 'jwt' },
      body: settingsSchema.partial().strict(),
      responses: { 200: { description: 'The settings', schema: settingsSchema } },
      async handler({ principal, body, req }) {
        // A missing token is known for certain and refused; missing AWS credentials only warned of
        // (GET /api/settings/providers): an instance role may appear, and the choice stays the admin's.
        const unavailable = body.emailProvider === 'postmark' && (await readiness(deps.emailProviderFor?.('postmark'))).problem;
        if (unavailable) throw badRequest(`emailProvider: ${body.emailProvider} is not configured (${unavailable})`);
        return { status: 200, body: await deps.accounts.changeSettings(accountOf(principal), callerOf(principal, req), body) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/settings/sms',
      summary: 'SMS settings',
      tag: 'settings',
      auth: { kind: 'jwt' },
      responses: { 200: { description: 'The SMS settings', schema: smsSchema } },
      async handler({ principal }) {
        return { status: 200, body: await deps.accounts.getSmsSettings(accountOf(principal)) };
      },
    }),
    defineRoute({
      method: 'put',
      path: '/api/settings/sms',
      summary: 'Replace SMS settings; in sandbox only the listed destinations may receive',
      tag: 'settings',
      auth: { kind: 'jwt' },
      body: smsSchema.strict(),
      responses: { 200: { description: 'The SMS settings', schema: smsSchema } },
      async handler({ principal, body, req }) {
        const sms = {
          ...body,
          originationNumber: body.originationNumber ? e164(body.originationNumber, 'originationNumber') : null,
          sandboxDestinations: [...new Set(body.sandboxDestinations.map((n) => e164(n, 'sandboxDestinations')))],
        };
        return { status: 200, body: await deps.accounts.changeSmsSettings(accountOf(principal), callerOf(principal, req), sms) };
      },
    }),
  ];
}
