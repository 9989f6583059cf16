import { z } from 'zod';
import type { SuppressionCommands } from '../../commands/suppressions.js';
import { defineRoute } from '../route.js';
import { accountOf, callerOf } from './principal-helpers.js';

const listQuery = z.object({
  search: z.string().max(320).optional(),
  cursor: z.string().max(1000).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(25),
});
const addBody = z
  .object({ email: z.email().max(320).optional(), phone: z.string().max(32).optional(), reason: z.string().max(500).optional() })
  .strict()
  .refine((b) => Boolean(b.email) !== Boolean(b.phone), { message: 'give exactly one of email or phone' });

export function createSuppressionRoutes(deps: { suppressions: SuppressionCommands }) {
  const base = { tag: 'suppressions', auth: { kind: 'jwt' as const } };
  return [
    defineRoute({
      ...base,
      method: 'get',
      path: '/api/suppressions',
      summary: 'The account-wide suppression list, newest first',
      query: listQuery,
      responses: { 200: { description: '{items, nextCursor}' } },
      async handler({ principal, query }) {
        return { status: 200, body: await deps.suppressions.list(accountOf(principal), query) };
      },
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/api/suppressions',
      summary: 'Suppress an address or phone number by hand (fires contact.suppressed, source manual)',
      body: addBody,
      responses: { 201: { description: 'Suppressed: the entry as the list shows it' }, 200: { description: 'Was already suppressed: the existing entry' } },
      async handler({ principal, body, req }) {
        const result = await deps.suppressions.suppress({
          accountId: accountOf(principal),
          email: body.email,
          phone: body.phone,
          reason: 'manual',
          source: 'manual',
          detail: body.reason ?? null,
          ...callerOf(principal, req),
        });
        // An existing suppression is kept as it is (its reason and source stay): 200 with that entry.
        // an admin names the address (value is null only for an erased person's unsubscribe)
        const entry = await deps.suppressions.get(accountOf(principal), result.value!);
        return { status: result.suppressed ? 201 : 200, body: entry ?? { [result.kind]: result.value } };
      },
    }),
    defineRoute({
      ...base,
      method: 'delete',
      path: '/api/suppressions/:value',
      summary: 'Lift a suppression (the address may receive again)',
      params: z.object({ value: z.string().min(1).max(320) }),
      responses: { 200: { description: 'Lifted' }, 404: { description: 'Not suppressed' } },
      async handler({ principal, params, req }) {
        return { status: 200, body: await deps.suppressions.lift(accountOf(principal), callerOf(principal, req), params.value) };
      },
    }),
  ];
}
