import { z } from 'zod';
import type { createSendEmail } from '../../commands/send-email.js';
import { sendAtProblem } from '../../domain/messages/schedule.js';
import { defineRoute } from '../route.js';
import { metadataSchema, tagsSchema } from './labels.js';

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
    tags: tagsSchema.optional(),
    metadata: metadataSchema.optional(),
    sendAt: z.iso
      .datetime({ offset: true })
      .optional()
      .meta({ description: 'Schedule the send: an instant in the future, at most 30 days ahead', examples: ['2030-01-01T09:00:00Z'] }),
  })
  .strict()
  .superRefine((body, ctx) => {
    const late = body.sendAt === undefined ? null : sendAtProblem(new Date(body.sendAt), new Date());
    if (late) ctx.addIssue({ code: 'custom', path: ['sendAt'], message: late });
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
      // the key is checked in the send's own admission statement: one round trip for key, checks and cap
      auth: { kind: 'apiKey', scope: 'send', inHandler: true },
      body: sendEmailBody,
      idempotent: true,
      responses: {
        201: {
          description: 'Queued; a send with `sendAt` is scheduled and also answers `status: "scheduled"` and its `sendAt`',
          schema: z.object({ queued: z.literal(true), messageLogId: z.string(), status: z.literal('scheduled').optional(), sendAt: z.string().optional() }).meta({
            examples: [
              { queued: true, messageLogId: 'clx1abc2d0000qzrm5h3k8e7f' },
              { queued: true, messageLogId: 'clx1abc2d0000qzrm5h3k8e7f', status: 'scheduled', sendAt: '2030-01-01T09:00:00.000Z' },
            ],
          }),
        },
        400: { description: 'Invalid payload, suppressed recipient, unverified sender, or the per-key daily cap reached' },
        401: { description: 'Invalid, revoked or expired key, or client IP not allowed' },
        403: { description: 'Key lacks the `send` scope' },
        429: { description: 'Account daily send limit reached' },
      },
      async handler({ key, body, messageId }) {
        return { status: 201, body: await deps.sendEmail(key!, body, { messageId: messageId?.(0) }) };
      },
    }),
  ];
}
