import { z } from 'zod';
import type { createApiKeyCommands } from '../../commands/api-keys.js';
import { SCOPES } from '../../domain/principal.js';
import { defineRoute } from '../route.js';
import { accountOf, callerOf } from './principal-helpers.js';

// strict: a misspelt `ipAllowList` or `daily_limit` dropped in silence would make a key without the limit its creator asked for
const createBody = z
  .object({
    name: z.string().trim().min(1).max(200),
    scopes: z.array(z.string()).min(1).max(SCOPES.length * 2),
    expiresAt: z.iso.datetime({ offset: true }).nullable().optional(),
    ipAllowlist: z.array(z.string().max(100)).max(100).optional(),
    dailyLimit: z.number().int().positive().nullable().optional(),
  })
  .strict();
const idParams = z.object({ id: z.string().min(1).max(100) });

export function createApiKeyRoutes(deps: { apiKeys: ReturnType<typeof createApiKeyCommands> }) {
  return [
    defineRoute({
      method: 'post',
      path: '/api/api-keys',
      summary: 'Create an API key; the secret `key` is in this response only',
      tag: 'api-keys',
      auth: { kind: 'jwt' },
      body: createBody,
      responses: { 201: { description: 'The key, with its secret' }, 400: { description: 'Unknown scope, CIDR in ipAllowlist, dailyLimit not below the account cap' } },
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
      responses: { 200: { description: '{items}' } },
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
      responses: { 200: { description: '{id, revokedAt}' }, 404: { description: 'No such key in this account' } },
      async handler({ params, principal, req }) {
        return { status: 200, body: await deps.apiKeys.revoke(accountOf(principal), callerOf(principal, req), params.id) };
      },
    }),
  ];
}
