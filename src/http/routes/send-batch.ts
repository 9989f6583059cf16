import { z } from 'zod';
import type { createSendEmail } from '../../commands/send-email.js';
import { badRequest } from '../../domain/errors.js';
import { mapError } from '../error-mapping.js';
import { unstorableProblem } from '../reject-nul.js';
import { defineRoute } from '../route.js';
import { causeOfRequest } from './principal-helpers.js';
import { queuedSend, sendEmailBody } from './send-email.js';

export const MAX_BATCH = 100;

const sizeMessage = `messages must be a list of 1 to ${MAX_BATCH} messages`;

// Each message is checked on its own (one bad message answers its own 400, not the batch's): the batch
// schema takes any value per item, and the docs show the transactional body there instead.
const batchItem = z.unknown().meta({
  ...(z.toJSONSchema(sendEmailBody, { target: 'openapi-3.0', io: 'input', unrepresentable: 'any' }) as Record<string, unknown>),
  description: 'a body of POST /api/send/transactional',
});

export const sendBatchBody = z
  .object({
    messages: z.array(batchItem, { error: sizeMessage }).min(1, sizeMessage).max(MAX_BATCH, sizeMessage),
  })
  .strict()
  .meta({
    example: {
      messages: [
        { to: 'ada@example.org', fromEmail: 'hello@example.com', subject: 'Your receipt', html: '<p>Thanks!</p>', text: 'Thanks!', tags: ['receipt'], metadata: { orderId: '1042' } },
        { to: 'alan@example.org', fromEmail: 'hello@example.com', subject: 'Your receipt', html: '<p>Thanks!</p>', text: 'Thanks!', tags: ['receipt'], metadata: { orderId: '1043' } },
      ],
    },
  });

// An item's status is the HTTP status its message would have had alone, so a scheduled message's is
// 201 too (not the `scheduled` a transactional send answers) and carries its sendAt.
const item = z.union([
  queuedSend.omit({ status: true }).extend({ status: z.literal(201).meta({ type: 'integer' }) }),
  z.object({
    status: z.number().int().min(400).max(599),
    message: z.string(),
    error: z.string(),
    issues: z
      .array(z.object({ field: z.string().nullable(), message: z.string() }))
      .optional()
      .meta({ description: 'an invalid message: every problem found, where `message` names the first' }),
  }),
]);

type Item = { status: number } & Record<string, unknown>;

function failure(err: unknown): Item {
  const { status, body } = mapError(err);
  const { message, error, issues } = body;
  return { status, message, error, ...(issues ? { issues } : {}) };
}

export function createSendBatchRoutes(deps: { sendEmail: ReturnType<typeof createSendEmail> }) {
  return [
    defineRoute({
      method: 'post',
      path: '/api/send/batch',
      summary: 'Queue up to 100 transactional emails, each checked and capped on its own',
      tag: 'send',
      // Checked once for the batch: a bad key answers the request, not each of its messages.
      auth: { kind: 'apiKey', scope: 'send' },
      idempotent: true,
      body: sendBatchBody,
      itemsCheckedApart: 'messages',
      responses: {
        200: {
          description:
            'One result per message, in request order: `{status: 201, queued, messageLogId, sendAt?}` (sendAt: scheduled) or `{status: 4xx, message, error, issues?}`',
          schema: z.object({ items: z.array(item) }).meta({
            example: {
              items: [
                { status: 201, queued: true, messageLogId: 'clx0example0000000000000' },
                { status: 201, queued: true, messageLogId: 'clx0example0000000000001', sendAt: '2030-01-01T09:00:00.000Z' },
                { status: 400, message: 'alan@example.org is suppressed', error: 'Bad Request' },
                { status: 400, message: 'to: Invalid email address', error: 'Bad Request', issues: [{ field: 'to', message: 'Invalid email address' }] },
              ],
            },
          }),
        },
        400: { description: 'Not an object with `messages`, or `messages` not a list of 1 to 100' },
        401: { description: 'Invalid, revoked or expired key, or client IP not allowed' },
        403: { description: 'Key lacks the `send` scope' },
      },
      async handler({ principal, body, messageId, retaken, req }) {
        const cause = causeOfRequest(req);
        // Every valid message is handed to the send command in this same turn, so the admission group
        // commit takes them in one statement (and their appends in one after it).
        const items = await Promise.all(
          body.messages.map(async (raw, i): Promise<Item> => {
            const unstorable = unstorableProblem('message', raw);
            if (unstorable) return failure(badRequest(unstorable));
            const parsed = sendEmailBody.safeParse(raw);
            if (!parsed.success) return failure(parsed.error);
            try {
              return { ...(await deps.sendEmail(principal!, parsed.data, { messageId: messageId?.(i), retaken, cause })), status: 201 };
            } catch (err) {
              return failure(err);
            }
          }),
        );
        return { status: 200, body: { items } };
      },
    }),
  ];
}
