import { z } from 'zod';
import type { IdentityCommands } from '../../commands/identities.js';
import { defineRoute } from '../route.js';
import { instant } from './answer-fields.js';
import { accountOf, callerOf } from './principal-helpers.js';
import { emailAddress } from '../../domain/email/address.js';

const idParams = z.object({ id: z.string().min(1).max(100) });
const domainName = z
  .string()
  .trim()
  .max(253)
  .regex(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i, 'must be a domain name such as mail.example.com');

const check = z.enum(['pending', 'verified', 'failed']);
const checks = {
  dkim: check,
  spf: check,
  mailFrom: check,
  verified: z.boolean().meta({ description: 'may send: a domain needs dkim, spf and mailFrom verified, a single sender its own check (dkim)' }),
  dnsRecords: z.array(z.object({ type: z.string(), name: z.string(), value: z.string() })).meta({ description: 'what the owner publishes in DNS; empty for a single sender' }),
  createdAt: instant,
  updatedAt: instant,
};
const identities = {
  domain: z.object({ id: z.string(), domain: z.string(), ...checks }).meta({
    example: {
      id: 'clx9dom0000qzrm5h3k8e7f',
      domain: 'mail.acme.test',
      dkim: 'verified',
      spf: 'pending',
      mailFrom: 'pending',
      verified: false,
      dnsRecords: [
        { type: 'CNAME', name: 'abc123._domainkey.mail.acme.test', value: 'abc123.dkim.amazonses.com' },
        { type: 'MX', name: 'bounce.mail.acme.test', value: '10 feedback-smtp.eu-west-1.amazonses.com' },
        { type: 'TXT', name: 'bounce.mail.acme.test', value: 'v=spf1 include:amazonses.com ~all' },
      ],
      createdAt: '2026-03-01T09:00:00.000Z',
      updatedAt: '2026-03-01T09:20:00.000Z',
    },
  }),
  email: z.object({ id: z.string(), email: z.string(), ...checks }).meta({
    example: { id: 'clx9snd0000qzrm5h3k8e7f', email: 'billing@acme.test', dkim: 'verified', spf: 'verified', mailFrom: 'verified', verified: true, dnsRecords: [], createdAt: '2026-03-01T09:00:00.000Z', updatedAt: '2026-03-01T09:05:00.000Z' },
  }),
};

/** Domains (`/api/domains`) and single sender identities (`/api/senders`): the same status model. */
export function createIdentityRoutes(deps: { identities: IdentityCommands }) {
  const kinds = [
    { path: '/api/domains', kind: 'domain' as const, field: 'domain', body: z.object({ domain: domainName }).strict() },
    { path: '/api/senders', kind: 'email' as const, field: 'email', body: z.object({ email: emailAddress() }).strict() },
  ] as { path: string; kind: 'domain' | 'email'; field: string; body: z.ZodType<Record<string, string>> }[];
  return kinds.flatMap(({ path, kind, field, body }) => [
    defineRoute({
      method: 'post',
      path,
      summary: `Add a ${kind === 'domain' ? 'sending domain' : 'single sender identity'}`,
      tag: 'identities',
      auth: { kind: 'jwt' },
      body,
      responses: { 201: { description: `{id, ${field}, dkim, spf, mailFrom, verified, dnsRecords}`, schema: identities[kind] }, 409: { description: 'Already added' } },
      async handler({ principal, body, req }) {
        return { status: 201, body: await deps.identities.add(accountOf(principal), callerOf(principal, req), kind, body[field]) };
      },
    }),
    defineRoute({
      method: 'get',
      path,
      summary: `List ${kind === 'domain' ? 'domains' : 'sender identities'}`,
      tag: 'identities',
      auth: { kind: 'jwt' },
      responses: { 200: { description: '{items}', schema: z.object({ items: z.array(identities[kind]) }) } },
      async handler({ principal }) {
        return { status: 200, body: { items: await deps.identities.list(accountOf(principal), kind) } };
      },
    }),
    defineRoute({
      method: 'post',
      path: `${path}/:id/verify`,
      summary: "Ask the account's provider for the current verification status",
      tag: 'identities',
      auth: { kind: 'jwt' },
      params: idParams,
      responses: { 200: { description: 'The identity with its checks', schema: identities[kind] }, 404: { description: 'Not in this account' } },
      async handler({ principal, params, req }) {
        return { status: 200, body: await deps.identities.verify(accountOf(principal), callerOf(principal, req), kind, params.id) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: `${path}/:id`,
      summary: `Remove a ${kind === 'domain' ? 'domain' : 'sender identity'}: sends from it are refused from then on. The identity at the provider is left as it is`,
      tag: 'identities',
      auth: { kind: 'jwt' },
      params: idParams,
      responses: { 204: { description: 'Removed' }, 404: { description: 'Not in this account, or already removed' } },
      async handler({ principal, params, req }) {
        await deps.identities.remove(accountOf(principal), callerOf(principal, req), kind, params.id);
        return { status: 204 };
      },
    }),
  ]);
}
