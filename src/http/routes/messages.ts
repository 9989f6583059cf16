import { z } from 'zod';
import type { CancelMessage } from '../../commands/cancel-message.js';
import { MESSAGE_STATUSES, type MessageQueries } from '../../read-models/messages.js';
import type { MessageStatus } from '../../domain/messages/message.js';
import type { MessageHistory } from '../../commands/replay.js';
import type { MessageDetail } from '../../commands/message-detail.js';
import { defineRoute } from '../route.js';
import { causeOfRequest } from './principal-helpers.js';
import { COUNT_KINDS, type MessageCountQueries } from '../../read-models/message-counts.js';
import { TIMELINE_KIND } from '../../projections/messages.js';
import { contactSchema } from './contacts.js';
import { instant, nullableEnum } from './answer-fields.js';
import { tagFilterSchema, withLabelFilters } from './labels.js';
import { givenInstant } from '../../domain/instant.js';

const filters = {
  status: z.enum(MESSAGE_STATUSES as [MessageStatus, ...MessageStatus[]]).optional(),
  search: z.string().max(320).optional(),
  from: givenInstant.optional(),
  to: givenInstant.optional(),
  tag: tagFilterSchema
    .optional()
    .describe('messages carrying every one of these tags: repeat the parameter for several (`tag=a&tag=b`), at most 10. The bracket forms (`tag[]=a`, `tag[0]=a`) are refused'),
  // documents the `metadata[<key>]=<value>` family; the handler reads each such parameter by its literal name
  'metadata[key]': z
    .string()
    .max(256)
    .optional()
    .describe('metadata[<key>]=<value>: messages whose metadata has this entry; repeat for several keys. The key is any text, URL-encoded with the brackets (`metadata%5Border%20id%5D=1042`)'),
};

const listQuery = withLabelFilters(z.object({ ...filters, cursor: z.string().max(500).optional(), limit: z.coerce.number().int().min(1).max(100).default(25) }));
const aggregateQuery = withLabelFilters(z.object({ ...filters, subject: z.string().max(998).optional(), campaignId: z.string().max(100).optional() }));
const idParams = z.object({ id: z.string().min(1).max(100) });

// The list's filters, as far as counts can answer them (src/read-models/message-counts.ts refuses the rest).
const timeseriesQuery = withLabelFilters(z.object({
  ...filters,
  status: filters.status.describe('messages whose current status is this one: their activity, all of it, under the status they have now'),
  search: filters.search.describe('refused with 400: counts are not kept per text, so search narrows the list only'),
  tag: filters.tag.describe('one tag (at most one tag or metadata entry in all)'),
  'metadata[key]': filters['metadata[key]'].describe('metadata[<key>]=<value>: one metadata entry (at most one tag or metadata entry in all)'),
  from: givenInstant.optional().describe('start of the time axis: events (not messages created) from this instant, rounded down to the interval'),
  to: givenInstant.optional().describe('end of the time axis (default now)'),
  interval: z.enum(['hour', 'day']).default('day'),
}));
const bucketExample = { at: '2026-01-01T00:00:00.000Z', ...Object.fromEntries(COUNT_KINDS.map((k, i) => [k, 10 - i])) };
const bucketSchema = z.object({ at: z.string(), ...Object.fromEntries(COUNT_KINDS.map((k) => [k, z.number().int()])) }) as z.ZodObject<
  { at: z.ZodString } & Record<(typeof COUNT_KINDS)[number], z.ZodNumber>
>;

const statuses = MESSAGE_STATUSES as [MessageStatus, ...MessageStatus[]];
const counted = z.object({ unique: z.number().int().meta({ description: 'messages counted at least once' }), total: z.number().int() });

/** GET /api/messages/aggregate, and a campaign's stats. */
export const messageAggregate = z
  .object({
    total: z.number().int(),
    status: z.object(Object.fromEntries(MESSAGE_STATUSES.map((s) => [s, z.number().int()]))),
    opens: counted,
    clicks: counted,
  })
  .meta({
    example: {
      total: 4500,
      status: { scheduled: 0, queued: 1200, sent: 1000, delivered: 2290, bounced: 8, complained: 2, failed: 0, cancelled: 0 },
      opens: { unique: 900, total: 1400 },
      clicks: { unique: 120, total: 180 },
    },
  });

const messageExample = {
  id: 'clx1abc2d0000qzrm5h3k8e7f',
  channel: 'email',
  apiKeyId: 'clx9key0000qzrm5h3k8e7f',
  status: 'delivered',
  from: 'hello@acme.test',
  to: 'ada@example.org',
  subject: 'Your receipt for order 1234',
  provider: 'ses',
  providerMessageId: '0102018e1b2c3d4e-5f6a7b8c-9d0e-1f2a-3b4c-5d6e7f8a9b0c-000000',
  campaignId: null,
  templateId: null,
  tags: ['receipt'],
  metadata: { orderId: '1234' },
  error: null,
  sendAt: null,
  attachments: [{ filename: 'invoice.pdf', contentType: 'application/pdf', contentId: null, size: 48213 }],
  opens: 1,
  clicks: 0,
  createdAt: '2026-03-01T09:00:00.000Z',
  updatedAt: '2026-03-01T09:00:04.812Z',
};
const message = z
  .object({
    id: z.string(),
    channel: z.enum(['email', 'sms']),
    apiKeyId: z.string().nullable().meta({ description: 'null for a message the dashboard or a campaign sent' }),
    status: z.enum(statuses),
    from: z.string(),
    to: z.string().nullable().meta({ description: 'null once the recipient is erased or the message is past the account\'s retention' }),
    subject: z.string().nullable().meta({ description: 'null for an SMS, and as `to`' }),
    provider: z.enum(['ses', 'postmark', 'sandbox', 'sns']),
    providerMessageId: z.string().nullable(),
    campaignId: z.string().nullable(),
    templateId: z.string().nullable(),
    tags: z.array(z.string()),
    metadata: z.record(z.string(), z.string()),
    error: z.string().nullable().meta({ description: "the provider's last refusal" }),
    sendAt: instant.nullable().meta({ description: 'a scheduled send: when it goes to the provider' }),
    segments: z.number().int().optional().meta({ description: 'SMS only' }),
    encoding: z.enum(['gsm7', 'ucs2']).optional().meta({ description: 'SMS only' }),
    attachments: z
      .array(z.object({ filename: z.string(), contentType: z.string(), contentId: z.string().nullable(), size: z.number().int().meta({ description: 'decoded, in bytes' }) }))
      .optional()
      .meta({ description: 'email only: what was attached (empty when nothing, or past retention); the bytes are not kept here' }),
    opens: z.number().int().meta({ description: 'without suspected bots' }),
    clicks: z.number().int().meta({ description: 'without suspected bots' }),
    createdAt: instant,
    updatedAt: instant,
  })
  .meta({ example: messageExample });

const messageDetail = message
  .extend({
    events: z.array(
      z.object({
        type: z.enum(Object.values(TIMELINE_KIND) as [string, ...string[]]),
        occurredAt: instant,
        data: z.record(z.string(), z.unknown()).meta({ description: "the provider's report, as recorded" }),
      }),
    ),
    html: z.string().nullable().optional().meta({ description: 'email only; null once erased or expired, or when the message had none' }),
    text: z.string().nullable().optional().meta({ description: 'email only; as html' }),
    body: z.string().nullable().optional().meta({ description: 'SMS only; null once erased or expired' }),
    contact: contactSchema.nullable().optional().meta({ description: "with a dashboard session: the recipient's contact (null when none); absent for an API key" }),
    campaign: z.object({ id: z.string(), name: z.string() }).nullable().optional().meta({ description: 'with a dashboard session: the campaign that sent it (null when none); absent for an API key' }),
  })
  .meta({
    example: {
      ...messageExample,
      events: [
        { type: 'sent', occurredAt: '2026-03-01T09:00:01.204Z', data: { providerMessageId: messageExample.providerMessageId, provider: 'ses', acceptedAt: '2026-03-01T09:00:01.204Z', attempt: 1 } },
        { type: 'delivered', occurredAt: '2026-03-01T09:00:04.812Z', data: { providerEventId: 'f3a1c2d4-0b5e-4c6d-8e7f-9a0b1c2d3e4f', occurredAt: '2026-03-01T09:00:04.812Z', recipient: 'ada@example.org', smtpResponse: '250 2.0.0 OK' } },
      ],
      html: '<p>Thanks, Ada!</p>',
      text: 'Thanks, Ada!',
      contact: null,
      campaign: null,
    },
  });

const historyEvent = z.object({
  type: z.string(),
  version: z.number().int(),
  occurredAt: instant.meta({ description: 'when the event was recorded' }),
  actor: z.string().nullable(),
  data: z.unknown(),
  metadata: z.record(z.string(), z.unknown()),
  state: z
    .object({ status: nullableEnum(statuses), providerMessageId: z.string().nullable(), attempts: z.number().int(), providerEvents: z.number().int() })
    .meta({ description: "the message's state right after this event, as the decider folds it" }),
});

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
      responses: {
        200: {
          description: '{items, nextCursor}: `nextCursor` (null on the last page) asks for the next page',
          schema: z.object({ items: z.array(message), nextCursor: z.string().nullable() }).meta({ example: { items: [messageExample], nextCursor: null } }),
        },
        400: { description: 'Invalid filter, cursor, or limit above 100' },
      },
      async handler({ principal, query }) {
        return { status: 200, body: await deps.messages.list(principal!, query) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/messages/aggregate',
      summary: 'Counts for a filtered set: total, per status, opens and clicks (unique and total)',
      tag: 'messages',
      auth,
      query: aggregateQuery,
      responses: { 200: { description: '{total, status, opens, clicks}', schema: messageAggregate } },
      async handler({ principal, query }) {
        return { status: 200, body: await deps.messages.aggregate(principal!, query) };
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
      async handler({ principal, query }) {
        return { status: 200, body: await deps.counts.timeseries(principal!, query) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/messages/:id',
      summary: 'One message with its bodies (html and text, or an SMS body) and its event timeline, oldest first',
      tag: 'messages',
      auth,
      params: idParams,
      responses: { 200: { description: 'The message with `events`', schema: messageDetail }, 404: { description: 'Not found for this caller' } },
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
        409: { description: 'Already handed to the provider (sent, failed, or being sent), or failed without being sent (its recipient suppressed before its time): it cannot be cancelled' },
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
      responses: {
        200: {
          description: '[{type, version, occurredAt, actor, data, metadata, state}]',
          schema: z.array(historyEvent).meta({
            example: [
              {
                type: 'EmailQueued',
                version: 0,
                occurredAt: '2026-03-01T09:00:00.000Z',
                actor: 'apikey:clx9key0000qzrm5h3k8e7f',
                data: { messageId: 'clx1abc2d0000qzrm5h3k8e7f', to: 'ada@example.org', subject: 'Your receipt for order 1234' },
                metadata: { clientIp: '203.0.113.7', correlationId: 'req-7f3a', causationId: 'req-7f3a' },
                state: { status: 'queued', providerMessageId: null, attempts: 0, providerEvents: 0 },
              },
            ],
          }),
        },
        404: { description: 'Not in this account' } },
      async handler({ principal, params }) {
        return { status: 200, body: await deps.history(principal!, params.id) };
      },
    }),
  ];
}
