import { z } from 'zod';
import { detectMimeType } from 'nodemailer/lib/mime-funcs/mime-types';
import type { createSendEmail } from '../../commands/send-email.js';
import { checkAttachments, CONTENT_ID_PATTERN, CONTENT_ID_RULE, MAX_ATTACHMENTS } from '../../domain/email/attachments.js';
import { MAX_BODY, MAX_SUBJECT } from '../../domain/email/render.js';
import { defineRoute, instantAhead } from '../route.js';
import { instant } from './answer-fields.js';
import { causeOfRequest } from './principal-helpers.js';
import { metadataSchema, tagsSchema } from './labels.js';
import { givenInstant } from '../../domain/instant.js';
import { templateVariables } from '../../domain/templates/variables.js';
import { emailAddress } from '../../domain/email/address.js';

const httpUrl = z
  .url({ protocol: /^https?$/ })
  .max(2000);

/**
 * The sender's address. `Acme <news@acme.test>`, which other services take in their `from`, is
 * answered with where the name goes instead of a bare `Invalid email address`.
 */
export const senderAddress = emailAddress({
  error: (issue) => (typeof issue.input === 'string' && /<[^<>]+@[^<>]+>/.test(issue.input) ? 'must be the address alone (news@acme.test): a display name goes in fromName' : undefined),
}).max(320);

/**
 * The attachments as received, checked against every limit and turned into what is queued (the
 * content type resolved from the filename when not given, the decoded size counted).
 */
export const attachmentsField = z
  .array(
    z
      .object({
        // its characters are checked with the rest of the attachment rules (checkAttachments)
        filename: z.string().min(1).max(255),
        content: z.string().min(1, 'must not be empty'),
        contentType: z.string().max(255).regex(/^[\w.+-]+\/[\w.+-]+$/, 'must be a MIME type such as image/png').optional(),
        contentId: z.string().min(1).max(255).regex(CONTENT_ID_PATTERN, CONTENT_ID_RULE).optional(),
      })
      .strict(),
  )
  .max(MAX_ATTACHMENTS, `at most ${MAX_ATTACHMENTS} attachments per message`)
  .transform((list, ctx) => {
    const checked = checkAttachments(list, detectMimeType);
    if (checked.ok) return checked.attachments;
    // the field named relative to `attachments`, which zod prefixes
    ctx.addIssue({ code: 'custom', path: checked.field.split('.').slice(1), message: checked.message });
    return z.NEVER;
  })
  .meta({
    description: `At most ${MAX_ATTACHMENTS}, at most 7 MB (7,340,032 bytes) decoded in all. \`content\` is standard padded base64. An attachment with \`contentId\` is an inline part the HTML shows as \`<img src="cid:<contentId>">\`. Executable and script types are refused (by extension and by content type).`,
    examples: [[
      { filename: 'invoice.pdf', content: 'JVBERi0xLjQK', contentType: 'application/pdf' },
      { filename: 'logo.png', content: 'iVBORw0KGgo=', contentId: 'logo' },
    ]],
  });

export const sendEmailBody = z
  .object({
    to: emailAddress().max(320),
    fromEmail: senderAddress,
    fromName: z.string().max(200).optional(),
    replyTo: emailAddress().max(320).optional(),
    subject: z.string().min(1).max(MAX_SUBJECT).optional(),
    html: z.string().max(MAX_BODY).optional(),
    text: z.string().max(MAX_BODY).optional(),
    templateId: z.cuid2().optional(),
    variables: templateVariables
      .optional()
      .meta({ description: 'Values for the `{{placeholders}}` (Mustache) of the template or of this request\'s subject, html and text. A send with neither `templateId` nor `variables` goes out exactly as written, braces included.' }),
    unsubscribeUrl: httpUrl.optional(),
    tags: tagsSchema.optional(),
    metadata: metadataSchema.optional(),
    sendAt: givenInstant
      .optional()
      .meta({ description: 'Schedule the send: an instant in the future, at most 30 days ahead', get examples() { return [instantAhead(24)]; } }),
    attachments: attachmentsField.optional(),
  })
  .strict()
  .superRefine((body, ctx) => {
    // Whether sendAt lies ahead is for the send command to say, not this schema: the body is checked
    // before an Idempotency-Key's record is read, and a request remembered there must be answered
    // again after its sendAt has passed (see `idempotent` in ../route.ts).
    if (body.templateId) return;
    for (const field of ['subject', 'html', 'text'] as const) {
      if (body[field] === undefined) {
        ctx.addIssue({ code: 'custom', path: [field], message: `${field} is required unless templateId is given` });
      }
    }
  })
  .meta({
    examples: [
      {
        to: 'ada@example.org',
        fromEmail: 'hello@example.com',
        fromName: 'Example',
        subject: 'Your receipt for order {{orderId}}',
        html: '<p>Thanks, {{name}}! <a href="https://example.com/orders/{{orderId}}">Your order</a></p>',
        text: 'Thanks, {{name}}! Your order: https://example.com/orders/{{orderId}}',
        variables: { name: 'Ada', orderId: '1234' },
        tags: ['receipt'],
        metadata: { orderId: '1234', 'customer ref': 'K-77' },
      },
    ],
  });

/** What a send answers: POST /api/send/transactional, a template's test send. */
export const queuedSend = z.object({ queued: z.literal(true), messageLogId: z.string(), status: z.literal('scheduled').optional(), sendAt: instant.optional() }).meta({
  examples: [
    { queued: true, messageLogId: 'clx1abc2d0000qzrm5h3k8e7f' },
    { queued: true, messageLogId: 'clx1abc2d0000qzrm5h3k8e7f', status: 'scheduled', sendAt: '2030-01-01T09:00:00.000Z' },
  ],
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
      idempotent: true,
      responses: {
        201: {
          description: 'Queued; a send with `sendAt` is scheduled and also answers `status: "scheduled"` and its `sendAt`',
          schema: queuedSend,
        },
        400: { description: 'Invalid payload (including an attachment limit or a refused attachment type), suppressed recipient, unverified sender, or the per-key daily cap reached' },
        401: { description: 'Invalid, revoked or expired key, or client IP not allowed' },
        403: { description: 'Key lacks the `send` scope' },
        429: { description: 'Account daily send limit reached' },
      },
      async handler({ key, body, messageId, retaken, req }) {
        return { status: 201, body: await deps.sendEmail(key!, body, { messageId: messageId?.(0), retaken, cause: causeOfRequest(req) }) };
      },
    }),
  ];
}
