import { z } from 'zod';
import type { SuppressionListCommands } from '../../commands/suppression-list.js';
import type { SuppressionCommands } from '../../commands/suppressions.js';
import { MAX_SUPPRESSION_IMPORT } from '../../domain/suppression/import-entry.js';
import type { SuppressionReason, SuppressionSource } from '../../domain/suppression/suppression.js';
import { writeCsv } from '../csv.js';
import { defineRoute } from '../route.js';
import { instant } from './answer-fields.js';
import { accountOf, callerOf } from './principal-helpers.js';
import { emailAddress } from '../../domain/email/address.js';

const listQuery = z.object({
  search: z.string().max(320).optional(),
  cursor: z.string().max(1000).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(25),
});
const addBody = z
  .object({ email: emailAddress().max(320).optional(), phone: z.string().max(32).optional(), reason: z.string().max(500).optional() })
  .strict()
  .refine((b) => Boolean(b.email) !== Boolean(b.phone), { message: 'give exactly one of email or phone' });
// Entries are checked one by one in the command, so that a bad one is reported by index.
const importBody = z
  .object({
    entries: z.array(z.unknown()),
    notify: z.boolean().default(true).meta({ description: 'false: the new entries fire no contact.suppressed (a list your receivers know already)' }),
  })
  .strict();

const entryExample = {
  email: 'bob@example.org',
  reason: 'bounced',
  source: 'bounce',
  messageId: 'clx1abc2d0000qzrm5h3k8e7f',
  campaignId: null,
  detail: 'smtp; 550 5.1.1 unknown user',
  createdAt: '2026-11-27T09:30:00.000Z',
};
const entry = z
  .object({
    email: z.string().nullable().optional().meta({ description: 'an address entry; null for an erased person (see person)' }),
    phone: z.string().nullable().optional().meta({ description: 'a phone number entry (E.164); null for an erased person (see person)' }),
    person: z.string().optional().meta({ description: "an erased person's entry, which still holds: their keyed hash, no address" }),
    reason: z.enum(['bounced', 'complained', 'unsubscribed', 'manual', 'sms_optout'] as const satisfies readonly SuppressionReason[]),
    source: z.enum(['one_click', 'form', 'bounce', 'complaint', 'manual', 'sms_optout', 'import'] as const satisfies readonly SuppressionSource[]),
    messageId: z.string().nullable(),
    campaignId: z.string().nullable(),
    detail: z.string().nullable().meta({ description: "what an admin wrote as the reason, or a bounce's diagnostic" }),
    createdAt: instant,
  })
  .meta({ example: entryExample });

/** The export's columns: the list's fields, `person` for an erased person's entry (no address left). */
const EXPORT_COLUMNS = ['email', 'phone', 'person', 'reason', 'source', 'detail', 'messageId', 'campaignId', 'createdAt'];

export function createSuppressionRoutes(deps: { suppressions: SuppressionCommands; list: SuppressionListCommands }) {
  const base = { tag: 'suppressions', auth: { kind: 'jwt' as const } };
  return [
    defineRoute({
      ...base,
      method: 'get',
      path: '/api/suppressions',
      summary: 'The account-wide suppression list, newest first',
      query: listQuery,
      responses: {
        200: {
          description: '{items, nextCursor}: `nextCursor` (null on the last page) asks for the next page',
          schema: z.object({ items: z.array(entry), nextCursor: z.string().nullable() }).meta({ example: { items: [entryExample], nextCursor: null } }),
        },
      },
      async handler({ principal, query }) {
        return { status: 200, body: await deps.suppressions.list(accountOf(principal), query) };
      },
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/api/suppressions',
      summary: 'Suppress an address or phone number by hand (fires contact.suppressed, source manual)',
      body: addBody,
      responses: { 201: { description: 'Suppressed: the entry as the list shows it', schema: entry }, 200: { description: 'Was already suppressed: the existing entry', schema: entry } },
      async handler({ principal, body, req }) {
        const result = await deps.suppressions.suppress({
          accountId: accountOf(principal),
          email: body.email,
          phone: body.phone,
          reason: 'manual',
          source: 'manual',
          detail: body.reason ?? null,
          ...callerOf(principal, req),
        });
        // An existing suppression is kept as it is (its reason and source stay): 200 with that entry.
        // an admin names the address (value is null only for an erased person's unsubscribe)
        const entry = await deps.suppressions.get(accountOf(principal), result.value!);
        return { status: result.suppressed ? 201 : 200, body: entry ?? { [result.kind]: result.value } };
      },
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/api/suppressions/import',
      summary: `Suppress up to ${MAX_SUPPRESSION_IMPORT} addresses or numbers brought from elsewhere (source import; each fires contact.suppressed unless notify is false)`,
      body: importBody,
      responses: {
        200: {
          description:
            '{total, suppressed, alreadySuppressed, errors?: [{index, value?, message}]}: entries are `{email | phone, reason?: bounced | complained | unsubscribed | manual, detail?}`; invalid ones are listed, valid ones suppressed; an address already suppressed (or listed twice) keeps its entry',
          schema: z
            .object({
              total: z.number().int(),
              suppressed: z.number().int(),
              alreadySuppressed: z.number().int(),
              errors: z
                .array(z.object({ index: z.number().int(), value: z.string().optional(), message: z.string() }))
                .optional()
                .meta({ description: 'the invalid entries (absent when none), by their index in `entries`' }),
            })
            .meta({ example: { total: 3, suppressed: 1, alreadySuppressed: 1, errors: [{ index: 2, value: 'not-a-number', message: 'phone: not a phone number' }] } }),
        },
      },
      async handler({ principal, body, req }) {
        return { status: 200, body: await deps.list.import(accountOf(principal), callerOf(principal, req), body.entries, { notify: body.notify }) };
      },
    }),
    // A POST, as the export of a person's data is: it is recorded, and a cross-site page can make a
    // signed-in browser follow a link (the session cookie is SameSite=Lax) but not send the CSRF header.
    defineRoute({
      ...base,
      method: 'post',
      path: '/api/suppressions/export',
      summary: 'The whole suppression list as CSV, newest first (recorded in the audit trail as suppressions.exported)',
      responses: {
        200: {
          description: `CSV with a header row: ${EXPORT_COLUMNS.join(', ')}`,
          schema: z.string().meta({ examples: ['email,phone,person,reason,source,detail,messageId,campaignId,createdAt\r\nbob@example.org,,,bounced,bounce,smtp; 550 5.1.1 unknown user,msg_1,,2026-11-27T09:30:00.000Z'] }),
          contentType: 'text/csv',
        },
      },
      async handler({ principal, req, res }) {
        const { pages } = await deps.list.export(accountOf(principal), callerOf(principal, req));
        const day = new Date().toISOString().slice(0, 10);
        res.status(200).set({ 'content-disposition': `attachment; filename="suppressions-${day}.csv"`, 'cache-control': 'no-store' }).type('text/csv; charset=utf-8');
        await writeCsv(res, EXPORT_COLUMNS, pages);
        return undefined;
      },
    }),
    defineRoute({
      ...base,
      method: 'delete',
      path: '/api/suppressions/:value',
      summary: 'Lift a suppression (the address may receive again)',
      params: z.object({ value: z.string().min(1).max(320) }),
      responses: {
        200: {
          description: 'Lifted: the address or number, as normalised',
          schema: z
            .object({ email: z.string().optional(), phone: z.string().optional(), lifted: z.literal(true) })
            .meta({ example: { email: 'bob@example.org', lifted: true } }),
        },
        404: { description: 'Not suppressed' },
      },
      async handler({ principal, params, req }) {
        return { status: 200, body: await deps.suppressions.lift(accountOf(principal), callerOf(principal, req), params.value) };
      },
    }),
  ];
}
