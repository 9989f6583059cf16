import { z } from 'zod';
import type { WebhookDeliveryCommands } from '../../commands/webhook-deliveries.js';
import { defineRoute } from '../route.js';
import { instant } from './answer-fields.js';
import { accountOf, callerOf } from './principal-helpers.js';

const idParams = z.object({ id: z.string().min(1).max(100) });
const deliveryItem = z.object({
  id: z.string(),
  event: z.string(),
  eventId: z.string().nullable(),
  status: z.enum(['delivered', 'retrying', 'failed']),
  attempts: z.number().int(),
  lastResponseStatus: z.number().int().nullable(),
  lastError: z.string().nullable(),
  nextAttemptAt: instant.nullable(),
  createdAt: instant,
});

const deliveriesQuery = z
  .object({
    status: z.enum(['delivered', 'retrying', 'failed']).optional(),
    cursor: z.string().max(500).optional(),
    limit: z.coerce.number().int().min(1).max(500).default(500),
  })
  .strict();

export function createWebhookDeliveryRoutes(deps: { deliveries: WebhookDeliveryCommands }) {
  const base = { tag: 'webhooks', auth: { kind: 'jwt' as const }, params: idParams };
  return [
    defineRoute({
      ...base,
      method: 'post',
      path: '/api/webhooks/:id/test',
      summary: 'Send one signed `webhook.test` event now and return the result (recorded in the deliveries log; a failed test is not retried by itself)',
      responses: {
        200: {
          description: '{delivered, responseStatus, error?}',
          schema: z
            .object({
              delivered: z.boolean(),
              responseStatus: z.number().int().nullable().meta({ description: "the endpoint's HTTP status; null when it never answered" }),
              error: z.string().optional().meta({ description: 'why it was not delivered: `HTTP <status>`, `timed out`, or the network error' }),
            })
            .meta({ example: { delivered: false, responseStatus: 503, error: 'HTTP 503' } }),
        },
        404: { description: 'Not in this account' },
      },
      async handler({ principal, params, req }) {
        return { status: 200, body: await deps.deliveries.test(accountOf(principal), callerOf(principal, req), params.id) };
      },
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/api/webhooks/:id/deliveries',
      summary: 'Deliveries to this endpoint, newest first (failed ones for 14 days), a page at a time, of one status when asked',
      query: deliveriesQuery,
      responses: {
        200: {
          description: '{items, nextCursor}: each delivery with `eventId`, the payload\'s `id` the receiver deduplicates on; `nextCursor` (null on the last page) asks for the next page',
          schema: z.object({ items: z.array(deliveryItem), nextCursor: z.string().nullable() }).meta({
            example: {
              items: [
                {
                  id: 'c1d3f2a4-5b6c-5d7e-8f90-a1b2c3d4e5f6',
                  event: 'contact.unsubscribed',
                  eventId: '6f07911b-e292-5eab-9319-d17484a60d60',
                  status: 'retrying',
                  attempts: 2,
                  lastResponseStatus: 503,
                  lastError: 'HTTP 503',
                  nextAttemptAt: '2026-11-25T06:04:18.712Z',
                  createdAt: '2026-11-25T05:50:18.712Z',
                },
              ],
              nextCursor: null,
            },
          }),
        },
        404: { description: 'Not in this account' },
      },
      async handler({ principal, params, query }) {
        return { status: 200, body: await deps.deliveries.list(accountOf(principal), params.id, query) };
      },
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/api/webhook-deliveries/:id/retry',
      summary: 'Re-queue a failed delivery (a new series of attempts)',
      responses: { 200: { description: 'The delivery, as the retry left it', schema: deliveryItem }, 400: { description: 'Not failed' }, 404: { description: 'Not in this account' } },
      async handler({ principal, params, req }) {
        return { status: 200, body: await deps.deliveries.retry(accountOf(principal), callerOf(principal, req), params.id) };
      },
    }),
  ];
}
