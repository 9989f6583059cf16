import { z } from 'zod';
import type { WebhookCommands } from '../../commands/webhooks.js';
import { WEBHOOK_EVENTS } from '../../domain/webhooks/subscription.js';
import { defineRoute, instantAhead } from '../route.js';
import { instant } from './answer-fields.js';
import { accountOf, callerOf } from './principal-helpers.js';
import { givenInstant } from '../../domain/instant.js';

// Credentials in the URL would be sent as Basic auth unannounced, and shown to every admin and in the
// audit trail: the signature is how a receiver knows the sender.
const url = z
  .url({ protocol: /^https?$/ })
  .max(2000)
  .refine((u) => !/^[a-z]+:\/\/[^/?#]*@/i.test(u), 'a user name or password in the URL is not accepted: verify the signature instead');
// duplicates are dropped, so a list may name each event more than once; an empty one would subscribe to nothing
const events = z.array(z.enum(WEBHOOK_EVENTS)).min(1).max(20);
const idParams = z.object({ id: z.string().min(1).max(100) });
const pending = {
  nextSecret: z.string().optional().meta({ description: 'while a rotation waits for its time: the secret that signs from nextSecretAt' }),
  nextSecretAt: instant.optional(),
};
const view = z.object({ id: z.string(), url: z.string(), events: z.array(z.enum(WEBHOOK_EVENTS)), secret: z.string(), ...pending, createdAt: instant }).meta({
  example: {
    id: 'clx9whk0000qzrm5h3k8e7f',
    url: 'https://hooks.acme.test/courier',
    events: ['contact.unsubscribed', 'contact.bounced', 'contact.complained', 'contact.suppressed'],
    secret: 'whsec_9fK2mQ7xV4pL1sD8hJ3gT6rW0yB5cN2e',
    createdAt: '2026-03-01T09:00:00.000Z',
  },
});

export function createWebhookRoutes(deps: { webhooks: WebhookCommands }) {
  const base = { tag: 'webhooks', auth: { kind: 'jwt' as const } };
  return [
    defineRoute({
      ...base,
      method: 'post',
      path: '/api/webhooks',
      summary: 'Subscribe an endpoint to contact events (all four by default)',
      body: z.object({ url, events: events.optional() }).strict(),
      responses: { 201: { description: 'The subscription with its signing secret', schema: view }, 400: { description: 'Invalid or private URL' } },
      async handler({ principal, body, req }) {
        return { status: 201, body: await deps.webhooks.create(accountOf(principal), callerOf(principal, req), body) };
      },
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/api/webhooks',
      summary: 'List subscriptions',
      responses: { 200: { description: '{items}', schema: z.object({ items: z.array(view) }) } },
      async handler({ principal }) {
        return { status: 200, body: { items: await deps.webhooks.list(accountOf(principal)) } };
      },
    }),
    defineRoute({
      ...base,
      method: 'patch',
      path: '/api/webhooks/:id',
      summary: 'Change the URL or the event filter',
      params: idParams,
      body: z.object({ url: url.optional(), events: events.optional() }).strict(),
      responses: { 200: { description: 'The subscription', schema: view }, 404: { description: 'Not in this account' } },
      async handler({ principal, params, body, req }) {
        return { status: 200, body: await deps.webhooks.change(accountOf(principal), callerOf(principal, req), params.id, body) };
      },
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/api/webhooks/:id/reveal-secret',
      summary: 'Read the signing secret; each reading is recorded in the audit trail (webhook.secret_revealed)',
      params: idParams,
      responses: {
        200: { description: '{id, secret, nextSecret?, nextSecretAt?}', schema: z.object({ id: z.string(), secret: z.string(), ...pending }) },
        404: { description: 'Not in this account' },
      },
      async handler({ principal, params, req }) {
        return { status: 200, body: await deps.webhooks.revealSecret(accountOf(principal), callerOf(principal, req), params.id) };
      },
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/api/webhooks/:id/rotate-secret',
      summary:
        'A new signing secret (recorded in the audit trail as webhook.secret_rotated, without it). It signs from activeAt, at most 7 days ahead (now when absent): until then the old one signs, so the receiver can accept both before the switch',
      params: idParams,
      body: z
        .object({ activeAt: givenInstant.optional().meta({ description: 'when the new secret starts signing', get examples() { return [instantAhead(24)]; } }) })
        .strict(),
      responses: {
        200: { description: '{id, newSecret, activeAt}', schema: z.object({ id: z.string(), newSecret: z.string(), activeAt: instant }) },
        400: { description: 'activeAt more than 7 days ahead' },
        404: { description: 'Not in this account' },
      },
      async handler({ principal, params, body, req }) {
        return { status: 200, body: await deps.webhooks.rotateSecret(accountOf(principal), callerOf(principal, req), params.id, body.activeAt) };
      },
    }),
    defineRoute({
      ...base,
      method: 'delete',
      path: '/api/webhooks/:id',
      summary: 'Remove a subscription',
      params: idParams,
      responses: {
        200: { description: '{id, deleted}', schema: z.object({ id: z.string(), deleted: z.literal(true) }).meta({ example: { id: 'clx9whk0000qzrm5h3k8e7f', deleted: true } }) },
        404: { description: 'Not in this account' },
      },
      async handler({ principal, params, req }) {
        return { status: 200, body: await deps.webhooks.remove(accountOf(principal), callerOf(principal, req), params.id) };
      },
    }),
  ];
}
