import { z } from 'zod';
import type { createApiKeyCommands } from '../../commands/api-keys.js';
import { SCOPES, type Scope } from '../../domain/principal.js';
import { defineRoute } from '../route.js';
import { instant } from './answer-fields.js';
import { accountOf, callerOf } from './principal-helpers.js';
import { givenInstant } from '../../domain/instant.js';
import { normaliseIp } from '../../domain/ip.js';

const scope = z.enum(SCOPES as [Scope, ...Scope[]], {
  error: (issue) => `unknown scope: ${typeof issue.input === 'string' ? issue.input : JSON.stringify(issue.input)} (valid scopes: ${SCOPES.join(', ')})`,
});
/** One address, in the canonical text the client's address is compared with. */
const allowedIp = z
  .string()
  .max(100)
  .transform((ip, ctx) => normaliseIp(ip) ?? (ctx.addIssue({ code: 'custom', message: `${ip} is not a single IPv4 or IPv6 address (CIDR ranges are unsupported)` }), z.NEVER));

// strict: a misspelt `ipAllowList` or `daily_limit` dropped in silence would make a key without the limit its creator asked for
const createBody = z
  .object({
    name: z.string().trim().min(1).max(200),
    scopes: z.array(scope).min(1).max(SCOPES.length * 2),
    expiresAt: givenInstant.nullable().optional(),
    ipAllowlist: z.array(allowedIp).max(100).optional(),
    dailyLimit: z.number().int().positive().nullable().optional(),
  })
  .strict();
const idParams = z.object({ id: z.string().min(1).max(100) });

const keyFields = {
  id: z.string(),
  name: z.string(),
  prefix: z.string().meta({ description: 'the first characters of the secret, to tell keys apart' }),
  scopes: z.array(z.enum(SCOPES as [Scope, ...Scope[]])),
  expiresAt: instant.nullable(),
  ipAllowlist: z.array(z.string()).meta({ description: 'empty: any address' }),
  dailyLimit: z.number().int().nullable(),
  createdAt: instant,
};
const keyExample = {
  id: 'clx9key0000qzrm5h3k8e7f',
  name: 'checkout service',
  prefix: 'cl_q3ZxV1',
  scopes: ['send', 'read_events'],
  expiresAt: null,
  ipAllowlist: ['203.0.113.7'],
  dailyLimit: 5000,
  createdAt: '2026-03-01T09:00:00.000Z',
};
const createdKey = z
  .object({ ...keyFields, key: z.string().meta({ description: 'the secret, sent as X-API-Key: this answer is the only place it is ever shown' }) })
  .meta({ example: { ...keyExample, key: 'cl_q3ZxV1mN8pL2sK7dF4hJ9gT6rW0yB5cX1vA3eQ8uI2o' } });
const listedKey = z.object({ ...keyFields, revokedAt: instant.nullable(), lastUsedAt: instant.nullable() });

export function createApiKeyRoutes(deps: { apiKeys: ReturnType<typeof createApiKeyCommands> }) {
  return [
    defineRoute({
      method: 'post',
      path: '/api/api-keys',
      summary: 'Create an API key; the secret `key` is in this response only',
      tag: 'api-keys',
      auth: { kind: 'jwt' },
      body: createBody,
      responses: { 201: { description: 'The key, with its secret', schema: createdKey }, 400: { description: 'Unknown scope, CIDR in ipAllowlist, dailyLimit not below the account cap' } },
      async handler({ body, principal, req }) {
        return { status: 201, body: await deps.apiKeys.create(accountOf(principal), callerOf(principal, req), body) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/api-keys',
      summary: "List the account's API keys (never their secrets)",
      tag: 'api-keys',
      auth: { kind: 'jwt' },
      responses: {
        200: {
          description: '{items}, newest first',
          schema: z.object({ items: z.array(listedKey) }).meta({ example: { items: [{ ...keyExample, revokedAt: null, lastUsedAt: '2026-03-02T14:12:45.120Z' }] } }),
        },
      },
      async handler({ principal }) {
        return { status: 200, body: { items: await deps.apiKeys.list(accountOf(principal)) } };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/api/api-keys/:id',
      summary: 'Revoke a key, effective on its very next request',
      tag: 'api-keys',
      auth: { kind: 'jwt' },
      params: idParams,
      responses: {
        200: {
          description: '{id, revokedAt}: revoking a revoked key answers when it was first revoked',
          schema: z.object({ id: z.string(), revokedAt: instant }).meta({ example: { id: 'clx9key0000qzrm5h3k8e7f', revokedAt: '2026-03-05T10:00:00.000Z' } }),
        },
        404: { description: 'No such key in this account' } },
      async handler({ params, principal, req }) {
        return { status: 200, body: await deps.apiKeys.revoke(accountOf(principal), callerOf(principal, req), params.id) };
      },
    }),
  ];
}
