import { createId } from '@paralleldrive/cuid2';
import { z } from 'zod';
import type { Db } from '../adapters/db/knex.js';
import { normaliseEmail } from '../domain/email/address.js';
import { CONTACT_STATUSES, contactDecider, contactStream } from '../domain/contacts/contact.js';
import { badRequest, notFound } from '../domain/errors.js';
import { comparePositions, type EventStore, type Position } from '../ports/event-store.js';
import { describeZodError } from '../http/error-mapping.js';
import { execute } from './execute.js';
import type { WaitForProjection } from './read-your-writes.js';

const name = z.string().trim().max(200).nullable();
export const contactInput = z
  .object({
    email: z.email().max(320),
    firstName: name.optional(),
    lastName: name.optional(),
    company: name.optional(),
    tags: z.array(z.string().trim().min(1).max(100)).max(100).optional(),
    status: z.enum(CONTACT_STATUSES).optional(),
    listIds: z.array(z.string().trim().min(1).max(100)).max(100).optional(),
  })
  .strict();
export type ContactInput = z.infer<typeof contactInput>;

export const MAX_IMPORT = 5000;
const IMPORT_CONCURRENCY = 16;

export function contactView(row: Record<string, any>) {
  return {
    id: row.id,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    company: row.company,
    tags: row.tags,
    status: row.status,
    listIds: row.list_ids,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

export function createContactCommands(deps: { eventStore: EventStore; db: Db; waitFor: WaitForProjection }) {
  async function upsertOne(accountId: string, actor: string, input: ContactInput, addListIds: string[] = []) {
    const email = normaliseEmail(input.email);
    const { email: _e, ...fields } = input;
    const result = await execute(
      contactDecider,
      { contactId: createId(), accountId, email, fields, addListIds, now: new Date().toISOString() },
      { eventStore: deps.eventStore, streamId: contactStream(accountId, email), metadata: { actor } },
    );
    const outcome: 'created' | 'updated' | 'unchanged' = result.events.length === 0 ? 'unchanged' : result.events[0].data.created ? 'created' : 'updated';
    return { outcome, email, position: result.position };
  }

  async function read(accountId: string, email: string) {
    const row = await deps.db('contacts').where({ account_id: accountId, email }).first();
    if (!row) throw notFound(`contact ${email} not found`);
    return contactView(row);
  }

  return {
    async upsert(accountId: string, actor: string, input: ContactInput) {
      const { outcome, email, position } = await upsertOne(accountId, actor, input);
      await deps.waitFor('contacts', position);
      return { created: outcome === 'created', contact: await read(accountId, email) };
    },

    /**
     * Bulk upsert, idempotent: unchanged contacts append nothing. Invalid rows are reported by index and
     * the valid ones are still imported; each contact is one atomic append, so a crash leaves every
     * contact either fully written or not at all, and re-running the request completes the rest.
     */
    async import(accountId: string, actor: string, rows: unknown[], listId?: string) {
      if (rows.length > MAX_IMPORT) throw badRequest(`contacts: at most ${MAX_IMPORT} contacts per request (got ${rows.length})`);
      const errors: { index: number; email?: string; message: string }[] = [];
      const valid: { index: number; input: ContactInput }[] = [];
      const seen = new Map<string, number>();
      rows.forEach((row, index) => {
        const parsed = contactInput.safeParse(row);
        if (!parsed.success) {
          const email = (row as { email?: unknown })?.email;
          errors.push({ index, ...(typeof email === 'string' ? { email } : {}), message: describeZodError(parsed.error) });
          return;
        }
        const key = normaliseEmail(parsed.data.email);
        if (seen.has(key)) {
          errors.push({ index, email: parsed.data.email, message: `duplicate of contacts[${seen.get(key)}] in this request` });
          return;
        }
        seen.set(key, index);
        valid.push({ index, input: parsed.data });
      });

      const counts = { created: 0, updated: 0, unchanged: 0 };
      let last: Position | undefined;
      let next = 0;
      const worker = async () => {
        while (next < valid.length) {
          const item = valid[next++];
          const r = await upsertOne(accountId, actor, item.input, listId ? [listId] : []);
          counts[r.outcome]++;
          if (r.position && (!last || comparePositions(r.position, last) > 0)) last = r.position;
        }
      };
      await Promise.all(Array.from({ length: Math.min(IMPORT_CONCURRENCY, valid.length) }, worker));
      await deps.waitFor('contacts', last);
      return { total: rows.length, ...counts, ...(errors.length ? { errors } : {}) };
    },

    async list(accountId: string, q: { page: number; limit: number; search?: string; status?: string; tag?: string }) {
      const base = deps.db('contacts').where({ account_id: accountId });
      if (q.status) base.andWhere({ status: q.status });
      if (q.tag) base.andWhereRaw('tags @> ARRAY[?]::text[]', [q.tag]);
      if (q.search) {
        base.andWhereRaw(`(email || ' ' || coalesce(first_name, '') || ' ' || coalesce(last_name, '') || ' ' || coalesce(company, '')) ILIKE ?`, [
          `%${escapeLike(q.search)}%`,
        ]);
      }
      const [{ n }] = await base.clone().count('* as n');
      const rows = await base.orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).offset((q.page - 1) * q.limit).limit(q.limit);
      const total = Number(n);
      return { items: rows.map(contactView), total, page: q.page, pageSize: q.limit, totalPages: Math.ceil(total / q.limit) };
    },
  };
}
export type ContactCommands = ReturnType<typeof createContactCommands>;
