import { z } from 'zod';
import type { CancelMessage } from '../../commands/cancel-message.js';
import { MESSAGE_STATUSES, type MessageQueries } from '../../read-models/messages.js';
import type { MessageHistory } from '../../commands/replay.js';
import type { MessageDetail } from '../../commands/message-detail.js';
import { defineRoute } from '../route.js';
import { causeOfRequest } from './principal-helpers.js';
import { COUNT_KINDS, type MessageCountQueries } from '../../read-models/message-counts.js';
import { metadataFilterSchema, tagSchema } from './labels.js';

const instant = z.iso.datetime({ offset: true });
const filters = {
  status: z.enum(MESSAGE_STATUSES as [string, ...string[]]).optional(),
  search: z.string().max(320).optional(),
  from: instant.optional(),
  to: instant.optional(),
  // repeated (`tag=a&tag=b`): messages carrying every one of them
  tag: z.union([tagSchema, z.array(tagSchema).max(10, 'filter on at most 10 tags')]).optional(),
  // documents the `metadata[<key>]=<value>` family; the handler reads each such parameter by its literal name
  'metadata[key]': z
    .string()
    .max(256)
    .optional()
    .describe('metadata[<key>]=<value>: messages whose metadata has this entry; repeat for several keys. The key is any text, URL-encoded with the brackets (`metadata%5Border%20id%5D=1042`)'),
};

/** The route's parsed filters plus the tag and metadata ones, in the queries' terms. */
function labelFilters(query: { tag?: string | string[] }, raw: unknown) {
  const tags = query.tag === undefined ? undefined : typeof query.tag === 'string' ? [query.tag] : query.tag;
  return { tags, metadata: metadataFilterSchema.parse(raw) };
}
const listQuery = z.object({ ...filters, cursor: z.string().max(500).optional(), limit: z.coerce.number().int().min(1).max(100).default(25) });
const aggregateQuery = z.object({ ...filters, subject: z.string().max(998).optional(), campaignId: z.string().max(100).optional() });
const idParams = z.object({ id: z.string().min(1).max(100) });

// The list's filters, as far as counts can answer them (src/read-models/message-counts.ts refuses the rest).
const timeseriesQuery = z.object({
  ...filters,
  status: filters.status.describe('messages whose current status is this one: their activity, all of it, under the status they have now'),
  search: filters.search.describe('refused with 400: counts are not kept per text, so search narrows the list only'),
  tag: filters.tag.describe('one tag (at most one tag or metadata entry in all)'),
  'metadata[key]': filters['metadata[key]'].describe('metadata[<key>]=<value>: one metadata entry (at most one tag or metadata entry in all)'),
  from: instant.optional().describe('start of the time axis: events (not messages created) from this instant, rounded down to the interval'),
  to: instant.optional().describe('end of the time axis (default now)'),
  interval: z.enum(['hour', 'day']).default('day'),
});
const bucketExample = { at: '2026-01-01T00:00:00.000Z', ...Object.fromEntries(COUNT_KINDS.map((k, i) => [k, 10 - i])) };
const bucketSchema = z.object({ at: z.string(), ...Object.fromEntries(COUNT_KINDS.map((k) => [k, z.number().int()])) }) as z.ZodObject<
  { at: z.ZodString } & Record<(typeof COUNT_KINDS)[number], z.ZodNumber>
>;

export function createMessageRoutes(deps: { messages: MessageQueries; detail: MessageDetail; history: MessageHistory; cancel: CancelMessage; counts: MessageCountQueries }) {
  const auth = { kind: 'apiKeyOrJwt' as const, scope: 'read_events' as const };
  return [
    defineRoute({
      method: 'get',
      path: '/api/messages',
      summary: 'Message history, newest first; an API key sees only the messages it sent',
      tag: 'messages',
      auth,
      query: listQuery,
      responses: { 200: { description: '{items, nextCursor}' }, 400: { description: 'Invalid filter, cursor, or limit above 100' } },
      async handler({ principal, query, req }) {
        return { status: 200, body: await deps.messages.list(principal!, { ...query, ...labelFilters(query, req.query) } as never) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/messages/aggregate',
      summary: 'Counts for a filtered set: total, per status, opens and clicks (unique and total)',
      tag: 'messages',
      auth,
      query: aggregateQuery,
      responses: { 200: { description: '{total, status, opens, clicks}' } },
      async handler({ principal, query, req }) {
        return { status: 200, body: await deps.messages.aggregate(principal!, { ...query, ...labelFilters(query, req.query) } as never) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/messages/timeseries',
      summary:
        "Sends, deliveries, bounces, complaints, opens and clicks per hour or day (opens and clicks without suspected bots), from a read model of counts; the list's filters but search, with one tag or metadata entry at most; an API key sees only its own",
      tag: 'messages',
      auth,
      query: timeseriesQuery,
      responses: {
        200: {
          description: 'Zero-padded buckets from `from` (rounded down to the interval) to `to`',
          schema: z
            .object({ interval: z.enum(['hour', 'day']), from: z.string(), to: z.string(), buckets: z.array(bucketSchema) })
            .meta({ examples: [{ interval: 'day', from: '2026-01-01T00:00:00.000Z', to: '2026-01-01T12:00:00.000Z', buckets: [bucketExample] }] }),
        },
        400: { description: 'Invalid filter or instant, `from` after `to`, more than 1000 buckets, `search`, or more than one tag or metadata entry' },
      },
      async handler({ principal, query, req }) {
        return { status: 200, body: await deps.counts.timeseries(principal!, { ...query, ...labelFilters(query, req.query) } as never) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/messages/:id',
      summary: 'One message with its bodies (html and text, or an SMS body) and its event timeline, oldest first',
      tag: 'messages',
      auth,
      params: idParams,
      responses: { 200: { description: 'The message with `events`' }, 404: { description: 'Not found for this caller' } },
      async handler({ principal, params }) {
        return { status: 200, body: await deps.detail(principal!, params.id) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/messages/:id/cancel',
      summary: 'Cancel a scheduled message before the provider is asked to send it; cancelling twice answers the same',
      tag: 'messages',
      auth: { kind: 'apiKeyOrJwt', scope: 'send' },
      params: idParams,
      responses: {
        200: {
          description: 'Cancelled: it will never be sent',
          schema: z.object({ id: z.string(), status: z.literal('cancelled') }).meta({ examples: [{ id: 'clx1abc2d0000qzrm5h3k8e7f', status: 'cancelled' }] }),
        },
        404: { description: "Not found for this caller (another key's message, another account's)" },
        409: { description: 'Already handed to the provider (sent, failed, or being sent): it cannot be cancelled' },
      },
      async handler({ principal, params, req }) {
        return { status: 200, body: await deps.cancel(principal!, params.id, causeOfRequest(req)) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/messages/:id/history',
      summary: "The message stream's raw events in order, for auditors",
      tag: 'messages',
      auth: { kind: 'jwt' },
      params: idParams,
      responses: { 200: { description: '[{type, version, occurredAt, actor, data, metadata, state}]' }, 404: { description: 'Not in this account' } },
      async handler({ principal, params }) {
        return { status: 200, body: await deps.history(principal!, params.id) };
      },
    }),
  ];
}
