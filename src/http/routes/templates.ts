import { z } from 'zod';
import type { createSendEmail } from '../../commands/send-email.js';
import type { TemplateCommands } from '../../commands/templates.js';
import { MAX_SUBJECT } from '../../domain/email/render.js';
import { defineRoute } from '../route.js';
import { instant } from './answer-fields.js';
import { accountOf, callerOf, causeOfRequest } from './principal-helpers.js';
import { queuedSend, senderAddress } from './send-email.js';
import { templateVariables } from '../../domain/templates/variables.js';
import { emailAddress } from '../../domain/email/address.js';

const MAX_BODY = 1_000_000;
const fields = z.object({
  name: z.string().trim().min(1).max(200),
  subject: z.string().min(1).max(MAX_SUBJECT),
  html: z.string().max(MAX_BODY),
  text: z.string().max(MAX_BODY),
});
const idParams = z.object({ id: z.string().min(1).max(100) });
const templateSchema = fields.extend({ id: z.string(), createdAt: instant, updatedAt: instant }).meta({
  example: {
    id: 'clx9tpl0000qzrm5h3k8e7f',
    name: 'Receipt',
    subject: 'Your receipt for order {{orderId}}',
    html: '<p>Thanks, {{name}}!</p>',
    text: 'Thanks, {{name}}!',
    createdAt: '2026-03-01T09:00:00.000Z',
    updatedAt: '2026-03-02T11:30:00.000Z',
  },
});
const testBody = z
  .object({
    to: emailAddress().max(320),
    fromEmail: senderAddress,
    fromName: z.string().max(200).optional(),
    variables: templateVariables.optional(),
  })
  .strict();
/** A test send is marked so: `GET /api/messages?tag=test` lists them apart from real mail. */
const TEST_SEND_TAG = 'test';

export function createTemplateRoutes(deps: { templates: TemplateCommands; sendEmail: ReturnType<typeof createSendEmail> }) {
  const base = { tag: 'templates', auth: { kind: 'jwt' as const } };
  return [
    defineRoute({
      ...base,
      method: 'post',
      path: '/api/templates',
      summary: 'Create an email template (Mustache placeholders)',
      body: fields.strict(),
      responses: { 201: { description: 'The template', schema: templateSchema } },
      async handler({ principal, body, req }) {
        return { status: 201, body: await deps.templates.create(accountOf(principal), callerOf(principal, req), body) };
      },
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/api/templates',
      summary: 'List templates',
      responses: { 200: { description: '{items}', schema: z.object({ items: z.array(templateSchema) }) } },
      async handler({ principal }) {
        return { status: 200, body: { items: await deps.templates.list(accountOf(principal)) } };
      },
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/api/templates/:id',
      summary: 'Read a template',
      params: idParams,
      responses: { 200: { description: 'The template', schema: templateSchema }, 404: { description: 'Not in this account' } },
      async handler({ principal, params }) {
        return { status: 200, body: await deps.templates.get(accountOf(principal), params.id) };
      },
    }),
    defineRoute({
      ...base,
      method: 'put',
      path: '/api/templates/:id',
      summary: 'Change a template (fields given replace the stored ones)',
      params: idParams,
      body: fields.partial().strict(),
      responses: { 200: { description: 'The template', schema: templateSchema }, 404: { description: 'Not in this account' } },
      async handler({ principal, params, body, req }) {
        return { status: 200, body: await deps.templates.update(accountOf(principal), callerOf(principal, req), params.id, body) };
      },
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/api/templates/:id/test',
      summary: `Send the saved template once, to see it in a real inbox. It is a send like any other (the recipient must not be suppressed, the sender must be verified, it counts towards the daily cap), tagged \`${TEST_SEND_TAG}\``,
      params: idParams,
      body: testBody,
      responses: {
        201: { description: '{queued: true, messageLogId}: follow it in GET /api/messages/:id', schema: queuedSend },
        400: { description: 'A send rule refused it (the same messages as POST /api/send/transactional)' },
        404: { description: 'Not in this account' },
      },
      async handler({ principal, params, body, req }) {
        await deps.templates.get(accountOf(principal), params.id);
        return { status: 201, body: await deps.sendEmail(principal!, { ...body, templateId: params.id, tags: [TEST_SEND_TAG] }, { cause: causeOfRequest(req) }) };
      },
    }),
    defineRoute({
      ...base,
      method: 'delete',
      path: '/api/templates/:id',
      summary: 'Delete a template',
      params: idParams,
      responses: {
        200: { description: '{id, deleted}', schema: z.object({ id: z.string(), deleted: z.literal(true) }).meta({ example: { id: 'clx9tpl0000qzrm5h3k8e7f', deleted: true } }) },
        404: { description: 'Not in this account' },
      },
      async handler({ principal, params, req }) {
        return { status: 200, body: await deps.templates.remove(accountOf(principal), callerOf(principal, req), params.id) };
      },
    }),
  ];
}
