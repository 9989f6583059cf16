import { z } from 'zod';
import type { createSendEmail } from '../../commands/send-email.js';
import { defineRoute } from '../route.js';

const MAX_BODY = 5_000_000;
const httpUrl = z
  .url({ protocol: /^https?$/ })
  .max(2000);

export const sendEmailBody = z
  .object({
    to: z.email().max(320),
    fromEmail: z.email().max(320),
    fromName: z.string().max(200).optional(),
    replyTo: z.email().max(320).optional(),
    subject: z.string().min(1).max(998).optional(),
    html: z.string().max(MAX_BODY).optional(),
    text: z.string().max(MAX_BODY).optional(),
    templateId: z.cuid2().optional(),
    variables: z.record(z.string(), z.unknown()).optional(),
    unsubscribeUrl: httpUrl.optional(),
  })
  .strict()
  .superRefine((body, ctx) => {
    if (body.templateId) return;
    for (const field of ['subject', 'html', 'text'] as const) {
      if (body[field] === undefined) {
        ctx.addIssue({ code: 'custom', path: [field], message: `${field} is required unless templateId is given` });
      }
    }
  });

export function createSendEmailRoutes(deps: { sendEmail: ReturnType<typeof createSendEmail> }) {
  return [
    defineRoute({
      method: 'post',
      path: '/api/send/transactional',
      summary: 'Queue one transactional email',
      tag: 'send',
      // the key is checked in the statement that reads the send's facts (one round trip for key and checks)
      auth: { kind: 'apiKey', scope: 'send', inHandler: true },
      body: sendEmailBody,
      responses: {
        201: { description: 'Queued', schema: z.object({ queued: z.literal(true), messageLogId: z.string() }) },
        400: { description: 'Invalid payload, suppressed recipient, unverified sender, or the per-key daily cap reached' },
        401: { description: 'Invalid, revoked or expired key, or client IP not allowed' },
        403: { description: 'Key lacks the `send` scope' },
        429: { description: 'Account daily send limit reached' },
      },
      async handler({ key, body }) {
        return { status: 201, body: await deps.sendEmail(key!, body) };
      },
    }),
  ];
}
