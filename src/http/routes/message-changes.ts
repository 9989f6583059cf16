import { z } from 'zod';
import { MAX_CHANGES_PAGE, MAX_WAIT_SECONDS, type MessageChanges } from '../../commands/message-changes.js';
import { badRequest } from '../../domain/errors.js';
import { defineRoute } from '../route.js';

// Digits only: z.coerce.number would take '' as 0 and '1e1' as 10.
const whole = (name: string, min: number, max: number) =>
  z
    .string()
    .regex(/^\d{1,7}$/, `${name} must be a whole number`)
    .transform(Number)
    .pipe(z.number().min(min, `${name} must be at least ${min}`).max(max, `${name} must be at most ${max}`));

const changesQuery = z.object({
  // Its length is the cursor decoder's to check, so that any cursor it never issued, too long included, gets one answer.
  after: z
    .string()
    .optional()
    .meta({ description: 'nextCursor of the previous page; absent: from the oldest event', example: 'djEuODQ1LjEyMDMuNm1pNHVzT3F2a1pGeS1xQm5IVjB0Zw', maxLength: 200 }),
  wait: whole('wait', 0, MAX_WAIT_SECONDS).optional().meta({ description: `seconds to hold the call while nothing has happened (0..${MAX_WAIT_SECONDS})`, example: '25' }),
  limit: whole('limit', 1, MAX_CHANGES_PAGE).optional().meta({ description: `items per page (1..${MAX_CHANGES_PAGE}, default 100)`, example: '100' }),
});

const changesPage = z
  .object({
    items: z.array(
      z.object({
        id: z.string().meta({ description: "the event's id" }),
        messageLogId: z.string(),
        type: z.enum(['queued', 'sent', 'delivered', 'bounced', 'complained', 'opened', 'clicked', 'failed', 'cancelled']),
        occurredAt: z.string(),
        data: z.record(z.string(), z.unknown()),
      }),
    ),
    nextCursor: z.string().meta({ description: 'poll with after=nextCursor next, also after an empty page' }),
  })
  .meta({
    example: {
      items: [
        {
          id: '5b0e7a52-1c3f-4a8e-9d51-0d8f0e6c2a11',
          messageLogId: 'msg_k2v9x0c7q1',
          type: 'queued',
          occurredAt: '2025-03-01T09:30:00.000Z',
          data: { channel: 'email', from: 'Acme <hello@acme.test>', to: 'ada@example.org', apiKeyId: 'key_7hq2', subject: 'Your receipt', campaignId: null, templateId: null },
        },
        {
          id: '9c41d2f0-58e3-4d0a-b7a2-3f61c0e9d874',
          messageLogId: 'msg_k2v9x0c7q1',
          type: 'delivered',
          occurredAt: '2025-03-01T09:30:02.412Z',
          data: { providerEventId: 'ses-7f3a', occurredAt: '2025-03-01T09:30:02.412Z', recipient: 'ada@example.org', smtpResponse: '250 2.0.0 OK' },
        },
      ],
      nextCursor: 'djEuODQ1LjEyMDMuNm1pNHVzT3F2a1pGeS1xQm5IVjB0Zw',
    },
  });

export function createMessageChangeRoutes(deps: { changes: MessageChanges }) {
  return [
    defineRoute({
      method: 'get',
      path: '/api/messages/changes',
      summary:
        "What happened to the caller's messages, in commit order, from a cursor; with `wait` the call holds until something happens. An API key sees its own messages, a dashboard user the account's. Never misses an event, never shows one twice.",
      tag: 'messages',
      auth: { kind: 'apiKeyOrJwt', scope: 'read_events' },
      query: changesQuery,
      responses: {
        200: { description: '{items, nextCursor}; items empty when `wait` passed with nothing new', schema: changesPage },
        400: { description: 'after is not a cursor this feed issued; wait above 30; limit above 1000; a `cursor` parameter (the cursor goes in after)' },
      },
      async handler({ principal, query, req, res }) {
        // Every list of the API pages with `cursor`, this feed with `after`: a `cursor` ignored would
        // answer the oldest page again on every poll, for ever.
        if (req.query.cursor !== undefined) {
          const message = 'this feed takes the nextCursor of its previous page as after';
          throw badRequest(`cursor: ${message}`, { issues: [{ field: 'cursor', message }] });
        }
        // A caller that hangs up ends its wait at once.
        const hangUp = new AbortController();
        res.once('close', () => hangUp.abort());
        const page = await deps.changes.changes(principal!, { after: query.after, wait: query.wait ?? 0, limit: query.limit ?? 100, signal: hangUp.signal });
        return { status: 200, body: page };
      },
    }),
  ];
}
