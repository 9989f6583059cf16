import { z } from 'zod';
import type { SandboxOutbox } from '../../read-models/sandbox-outbox.js';
import { badRequest, conflict } from '../../domain/errors.js';
import { notAPhoneNumber, parsePhoneNumber } from '../../domain/sms/phone.js';
import { defineRoute } from '../route.js';
import { accountOf } from './principal-helpers.js';

const listQuery = z.object({ limit: z.coerce.number().int().min(1).max(200).default(50) });
const base = { tag: 'sandbox', auth: { kind: 'jwt' as const } };

const emailExample = {
  messageId: 'clx1abc2d0000qzrm5h3k8e7f',
  from: 'Acme <hello@acme.test>',
  to: 'ada@example.com',
  replyTo: null,
  subject: 'Welcome',
  html: '<p>Hello</p>',
  text: 'Hello',
  headers: [{ name: 'List-Unsubscribe', value: '<https://mail.acme.test/u/abc>' }],
  createdAt: '2026-01-01T12:00:00.000Z',
  attachments: [{ position: 0, filename: 'invoice.pdf', contentType: 'application/pdf', contentId: null, size: 1024 }],
};

/**
 * The sandbox providers' outboxes, for the dashboard: what would have been sent, never delivered; and,
 * with the sandbox SMS provider, a number's opt-out as if it had replied STOP (`simulateSmsOptOut`).
 */
export function createSandboxRoutes(deps: { outbox: SandboxOutbox; simulateSmsOptOut?: (phone: string) => Promise<void> }) {
  return [
    defineRoute({
      ...base,
      method: 'post',
      path: '/api/sandbox/sms/opt-outs',
      summary: "With SMS_PROVIDER=sandbox: the number opts out, as if it had replied STOP; the next opt-out sync suppresses it in every SMS-enabled account",
      body: z.object({ phone: z.string().min(1).max(40) }).strict().meta({ example: { phone: '+14155550123' } }),
      responses: {
        201: { description: 'Opted out at the sandbox provider', schema: z.object({ phone: z.string() }).meta({ example: { phone: '+14155550123' } }) },
        400: { description: 'Not a phone number' },
        409: { description: 'SMS goes through SNS: opt-outs are the recipients\' own' },
      },
      async handler({ body }) {
        if (!deps.simulateSmsOptOut) throw conflict('SMS goes through SNS here, where opt-outs are the recipients\' own: SMS_PROVIDER=sandbox simulates them');
        const phone = parsePhoneNumber(body.phone);
        if (!phone) throw badRequest(`phone: ${notAPhoneNumber(body.phone)}`);
        await deps.simulateSmsOptOut(phone);
        return { status: 201, body: { phone } };
      },
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/api/sandbox/emails',
      summary: 'Emails the sandbox email provider recorded for this account, newest first, with headers and attachment details',
      query: listQuery,
      responses: {
        200: {
          description: '{items}',
          schema: z
            .object({
              items: z.array(
                z.object({
                  messageId: z.string(),
                  from: z.string(),
                  to: z.string(),
                  replyTo: z.string().nullable(),
                  subject: z.string(),
                  html: z.string().nullable(),
                  text: z.string().nullable(),
                  headers: z.array(z.object({ name: z.string(), value: z.string() })),
                  createdAt: z.string(),
                  attachments: z.array(z.object({ position: z.number().int(), filename: z.string(), contentType: z.string(), contentId: z.string().nullable(), size: z.number().int() })),
                }),
              ),
            })
            .meta({ examples: [{ items: [emailExample] }] }),
        },
      },
      async handler({ principal, query }) {
        return { status: 200, body: await deps.outbox.emails(accountOf(principal), query.limit) };
      },
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/api/sandbox/emails/:id/attachments/:position',
      summary: 'The bytes of one attachment the sandbox email provider recorded',
      params: z.object({ id: z.string().min(1).max(100), position: z.coerce.number().int().min(0).max(1000) }),
      responses: { 200: { description: 'The attachment, as a download, with its own content type', schema: z.string().meta({ format: 'binary' }), contentType: '*/*' }, 404: { description: 'No such attachment in this account' } },
      async handler({ principal, params, res }) {
        const file = await deps.outbox.attachment(accountOf(principal), params.id, params.position);
        res
          .status(200)
          .set({ 'Content-Type': file.contentType, 'Content-Disposition': `attachment; filename*=UTF-8''${encodeURIComponent(file.filename)}` })
          .send(file.content);
        return undefined;
      },
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/api/sandbox/sms',
      summary: 'SMS the sandbox SMS provider recorded for this account, newest first',
      query: listQuery,
      responses: {
        200: {
          description: '{items}',
          schema: z
            .object({ items: z.array(z.object({ messageId: z.string(), to: z.string(), from: z.string(), body: z.string(), createdAt: z.string() })) })
            .meta({ examples: [{ items: [{ messageId: 'clx1abc2d0000qzrm5h3k8e7f', to: '+15555550100', from: '+15555550199', body: 'Your code is 123456', createdAt: '2026-01-01T12:00:00.000Z' }] }] }),
        },
      },
      async handler({ principal, query }) {
        return { status: 200, body: await deps.outbox.sms(accountOf(principal), query.limit) };
      },
    }),
  ];
}
