import { z } from 'zod';
import { CONTACT_STATUSES } from '../../domain/contacts/contact.js';
import { parsePhoneNumber } from '../../domain/sms/phone.js';
import { contactInput, MAX_IMPORT, type ContactCommands } from '../../commands/contacts.js';
import type { ExportPersonalData } from '../../commands/personal-data-export.js';
import { defineRoute } from '../route.js';
import { writeJsonWithList } from '../stream-body.js';
import { instant } from './answer-fields.js';
import { accountOf, callerOf } from './principal-helpers.js';

/** A filter on one value: the parameter repeated is refused with why, not zod's "expected string, received array". */
const oneOf = (what: string) => z.string({ error: (issue) => (Array.isArray(issue.input) ? `filter on one ${what} at a time` : undefined) }).max(100);
// qs and axios write a list as `tag[]=a` or `tag[0]=a`: ignored, it would answer for every contact
const BRACKETED = { tag: 'one tag is sent as tag=<tag>, without brackets', listId: 'one list is sent as listId=<id>, without brackets' };
const listQuery = z
  .object({
    page: z.coerce.number().int().min(1).default(1),
    limit: z.coerce.number().int().min(1).max(100).default(25),
    search: z.string().max(320).optional(),
    status: z.enum(CONTACT_STATUSES).optional(),
    tag: oneOf('tag').optional(),
    listId: oneOf('list').optional(),
  })
  // the bracketed names are read as sent, which the object would strip
  .loose()
  .superRefine(
    (q, ctx) => {
      for (const name of Object.keys(q)) {
        const field = /^(tag|listId)[[.]/.exec(name)?.[1] as keyof typeof BRACKETED | undefined;
        if (field) ctx.addIssue({ code: 'custom', path: [name], message: BRACKETED[field] });
      }
    },
    // also when another parameter is wrong, so that one answer lists every problem
    { when: (payload) => typeof payload.value === 'object' && payload.value !== null },
  )
  .transform(({ page, limit, search, status, tag, listId }) => ({ page, limit, search, status, tag, listId }));
const importBody = z
  .object({
    // Rows are validated one by one in the command so that invalid rows can be reported by index.
    contacts: z.array(z.unknown()),
    listId: z.string().trim().min(1).max(100).optional(),
  })
  .strict();

const contactExample = {
  id: 'clx9ctc0000qzrm5h3k8e7f',
  email: 'ada@example.org',
  firstName: 'Ada',
  lastName: 'Lovelace',
  company: null,
  tags: ['vip'],
  status: 'subscribed',
  listIds: ['newsletter'],
  createdAt: '2026-03-01T09:00:00.000Z',
  updatedAt: '2026-03-04T16:45:10.250Z',
};
/** A contact as the contacts API shows it, and a message's detail beside the message. */
export const contactSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    firstName: z.string().nullable(),
    lastName: z.string().nullable(),
    company: z.string().nullable(),
    tags: z.array(z.string()),
    status: z.enum(CONTACT_STATUSES),
    listIds: z.array(z.string()),
    createdAt: instant,
    updatedAt: instant.meta({ description: 'moves on an upsert that changes it, and when a suppression or its lift changes its status' }),
  })
  .meta({ example: contactExample });
const importErrors = z
  .array(z.object({ index: z.number().int(), email: z.string().optional(), message: z.string() }))
  .optional()
  .meta({ description: 'the invalid rows (absent when none), by their index in `contacts`' });

/**
 * Contacts are account-wide data: an API key with the contacts scope, or a dashboard JWT (the
 * dashboard lists and edits contacts; a dashboard JWT has account-wide access).
 */
const read = { kind: 'apiKeyOrJwt', scope: 'contacts:read' } as const;
const write = { kind: 'apiKeyOrJwt', scope: 'contacts:write' } as const;

/**
 * Whom an erasure or an export is about: an email address, or a phone number an SMS went to (E.164,
 * or a 10-digit US number, as the SMS API takes them), which is a person of its own.
 */
const personParams = z.object({
  email: z
    .string()
    .min(3)
    .max(320)
    .transform((value, ctx) => {
      if (/^[^\s@]+@[^\s@]+$/.test(value)) return value;
      const phone = parsePhoneNumber(value);
      if (phone) return phone;
      ctx.addIssue({ code: 'custom', message: 'must be an email address or a phone number' });
      return z.NEVER;
    })
    .meta({ description: 'an email address, or a phone number (E.164)', example: 'ada@example.org' }),
});

export function createContactRoutes(deps: { contacts: ContactCommands; exportPersonalData: ExportPersonalData }) {
  return [
    defineRoute({
      method: 'get',
      path: '/api/contacts',
      summary: 'List contacts (page, limit, search, status, tag)',
      tag: 'contacts',
      auth: read,
      query: listQuery,
      responses: {
        200: {
          description: '{items, total, page, pageSize, totalPages}',
          schema: z
            .object({ items: z.array(contactSchema), total: z.number().int(), page: z.number().int(), pageSize: z.number().int(), totalPages: z.number().int() })
            .meta({ example: { items: [contactExample], total: 1, page: 1, pageSize: 25, totalPages: 1 } }),
        },
      },
      async handler({ principal, query }) {
        return { status: 200, body: await deps.contacts.list(accountOf(principal), query) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/contacts',
      summary: 'Upsert one contact by email (201 created, 200 updated)',
      tag: 'contacts',
      auth: write,
      body: contactInput,
      responses: { 201: { description: 'Created: the contact', schema: contactSchema }, 200: { description: 'Updated: the contact', schema: contactSchema } },
      async handler({ principal, body, req }) {
        const { created, contact } = await deps.contacts.upsert(accountOf(principal), callerOf(principal, req), body);
        return { status: created ? 201 : 200, body: contact };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/contacts/import',
      summary: `Bulk upsert by email, idempotent; at most ${MAX_IMPORT} contacts a request (500 recommended)`,
      tag: 'contacts',
      auth: write,
      body: importBody,
      responses: {
        200: {
          description: '{total, created, updated, unchanged, errors?: [{index, email?, message}]}; invalid rows are listed, valid rows imported',
          schema: z
            .object({ total: z.number().int(), created: z.number().int(), updated: z.number().int(), unchanged: z.number().int(), errors: importErrors })
            .meta({ example: { total: 3, created: 1, updated: 0, unchanged: 1, errors: [{ index: 2, email: 'not-an-address', message: 'email: Invalid email address' }] } }),
        },
        400: { description: `More than ${MAX_IMPORT} contacts` },
      },
      async handler({ principal, body, req }) {
        return { status: 200, body: await deps.contacts.import(accountOf(principal), callerOf(principal, req), body.contacts, body.listId) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/contacts/:email',
      summary: 'One contact by its email address (the list\'s `search` matches any text a contact contains)',
      tag: 'contacts',
      auth: read,
      params: z.object({ email: contactInput.shape.email.meta({ example: 'ada@example.org' }) }),
      responses: {
        200: { description: 'The contact', schema: contactSchema },
        400: { description: 'Not an email address' },
        404: { description: 'No contact has this address' },
      },
      async handler({ principal, params }) {
        return { status: 200, body: await deps.contacts.get(accountOf(principal), params.email) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/api/contacts/:email',
      summary: 'Erase a person (erase=true), by email address or by the phone number SMS went to: their address, names and message bodies can no longer be read anywhere; counts and statuses stay, a suppression stays',
      tag: 'contacts',
      auth: write,
      params: personParams,
      query: z.object({ erase: z.literal('true', { message: 'erase=true is required: deleting a contact forgets the person' }) }),
      responses: {
        200: { description: 'Erased', schema: z.object({ erased: z.literal(true) }).meta({ example: { erased: true } }) },
        400: { description: 'Without erase=true, or not an email address' },
      },
      async handler({ principal, params, req }) {
        return { status: 200, body: await deps.contacts.erase(accountOf(principal), callerOf(principal, req), params.email) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/contacts/:email/export',
      summary:
        "Everything kept about a person (an email address, or a phone number SMS went to), for their request to see it: the contact, the suppression and every message to the address with its whole history. Recorded in the audit trail (by the address's keyed hash). Dashboard users only",
      tag: 'contacts',
      auth: { kind: 'jwt' },
      params: personParams,
      responses: {
        200: {
          description: '{email, exportedAt, contact, suppression, messages: [{id, history}]}; empty when nothing is kept',
          schema: z
            .object({ email: z.string(), exportedAt: z.string(), contact: z.unknown(), suppression: z.unknown(), messages: z.array(z.object({ id: z.string(), history: z.array(z.unknown()) })) })
            .meta({ example: { email: 'ada@example.org', exportedAt: '2026-03-01T09:30:00.000Z', contact: { email: 'ada@example.org', firstName: 'Ada' }, suppression: null, messages: [{ id: 'msg_k2v9x0c7q1', history: [] }] } }),
        },
      },
      async handler({ principal, params, req, res }) {
        const { head, messages } = await deps.exportPersonalData(accountOf(principal), callerOf(principal, req), params.email);
        res.status(200).set({ 'content-disposition': 'attachment; filename="personal-data.json"', 'cache-control': 'no-store' }).type('application/json; charset=utf-8');
        await writeJsonWithList(res, head, 'messages', messages);
        return undefined;
      },
    }),
  ];
}
