import { z } from 'zod';
import type { AuditQueries } from '../../read-models/audit.js';
import { defineRoute } from '../route.js';
import { accountOf } from './principal-helpers.js';
import { givenInstant } from '../../domain/instant.js';

const listQuery = z.object({
  cursor: z.string().max(100).optional().meta({ description: 'nextCursor of the previous page', example: 'MTI4' }),
  limit: z.coerce.number().int().min(1).max(100).default(25).meta({ description: 'entries per page (1..100, default 25)', example: 25 }),
  action: z
    .string()
    .regex(/^[a-z_]+\.([a-z_]+|\*)$/, 'an action (webhook.deleted) or a family of them (webhook.*)')
    .optional()
    .meta({ description: 'one action, or a family of them ending in `.*`', example: 'api_key.*' }),
  actor: z.string().min(1).max(100).optional().meta({ description: "who acted: a user's or an API key's id, or `system`", example: 'clx1user0000qzrm5h3k8e7f' }),
  target: z.string().min(1).max(200).optional().meta({ description: 'what was acted on, by its id (a contact or suppression by keyed hash)', example: 'clx1hook0000qzrm5h3k8e7f' }),
  from: givenInstant.optional().meta({ description: 'entries at or after this instant', example: '2026-03-01T00:00:00Z' }),
  to: givenInstant.optional().meta({ description: 'entries before this instant', example: '2026-04-01T00:00:00Z' }),
});

const entry = z.object({
  at: z.string(),
  actor: z.object({ type: z.enum(['user', 'apiKey', 'system']), id: z.string(), email: z.string().optional() }),
  ip: z.string().nullable(),
  action: z.string(),
  target: z.object({ type: z.string(), id: z.string() }),
  changes: z.record(z.string(), z.object({ from: z.unknown(), to: z.unknown() })),
});
const page = z.object({ items: z.array(entry), nextCursor: z.string().nullable() }).meta({
  examples: [
    {
      items: [
        {
          at: '2026-03-01T09:30:02.412Z',
          actor: { type: 'user', id: 'clx1user0000qzrm5h3k8e7f', email: 'owner@example.com' },
          ip: '203.0.113.7',
          action: 'settings.changed',
          target: { type: 'account', id: 'clx1acct0000qzrm5h3k8e7f' },
          changes: { dailySendCap: { from: 1000, to: 5000 } },
        },
        {
          at: '2026-03-01T09:29:40.001Z',
          actor: { type: 'user', id: 'clx1user0000qzrm5h3k8e7f', email: 'owner@example.com' },
          ip: '203.0.113.7',
          action: 'user.signed_in',
          target: { type: 'user', id: 'clx1user0000qzrm5h3k8e7f' },
          changes: {},
        },
      ],
      nextCursor: 'MTI4',
    },
  ],
});

export function createAuditRoutes(deps: { audit: AuditQueries }) {
  return [
    defineRoute({
      method: 'get',
      path: '/api/audit',
      summary:
        'The audit trail: every admin action of the account (who, from which address, what, before and after), newest first; the filters given must all hold (pass the same ones with `cursor`)',
      tag: 'audit',
      auth: { kind: 'jwt' },
      query: listQuery,
      responses: { 200: { description: '{items, nextCursor}', schema: page }, 401: { description: 'No dashboard token' } },
      async handler({ principal, query }) {
        return { status: 200, body: await deps.audit.list(accountOf(principal), query) };
      },
    }),
  ];
}
