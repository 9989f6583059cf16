import { z } from 'zod';
import type { createSendSms } from '../../commands/send-sms.js';
import { defineRoute } from '../route.js';
import { causeOfRequest } from './principal-helpers.js';

const body = z
  .object({
    // a field left out reads `required` (the global wording), one of another type says what it should be
    to: z.string({ error: (issue) => (issue.input === undefined ? undefined : 'to must be a string: a phone number in E.164, such as "+14155550100"') }).trim().min(1, 'must not be empty').max(64, 'to is not a valid phone number'),
    // Far above 10 segments of any encoding; the exact limit is checked by counting segments.
    body: z.string({ error: (issue) => (issue.input === undefined ? undefined : 'body must be a string') }).min(1, 'must not be empty').max(20_000, 'body is too long: more than 10 segments'),
  })
  .strict();

export function createSendSmsRoutes(deps: { sendSms: ReturnType<typeof createSendSms> }) {
  return [
    defineRoute({
      method: 'post',
      path: '/api/send/sms',
      summary: 'Send one SMS',
      tag: 'send',
      auth: { kind: 'apiKey', scope: 'sms:send' },
      body,
      idempotent: true,
      responses: {
        201: {
          description: 'Queued',
          schema: z.object({ queued: z.literal(true), messageLogId: z.string(), segments: z.number().int(), encoding: z.enum(['gsm7', 'ucs2']) }),
        },
        400: { description: 'Invalid phone, opted-out number, sandbox restriction, SMS disabled, no origination number, body too long, per-key cap' },
        401: { description: 'Invalid, expired or revoked key' },
        403: { description: 'Key lacks the `sms:send` scope' },
        429: { description: 'Account daily send limit reached' },
      },
      async handler({ principal, body, messageId, retaken, req }) {
        return { status: 201, body: await deps.sendSms(principal!, body, { messageId: messageId?.(0), retaken, cause: causeOfRequest(req) }) };
      },
    }),
  ];
}
