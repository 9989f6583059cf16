import type { Db } from '../adapters/db/knex.js';
import { badRequest } from '../domain/errors.js';

function decodeCursor(cursor: string): string {
  const seq = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^[1-9]\d{0,18}$/.test(seq)) throw badRequest('cursor is invalid');
  return seq;
}
const encodeCursor = (seq: string | number) => Buffer.from(String(seq)).toString('base64url');

/** The audit trail of one account (read model `audit`), newest first. */
export function createAuditQueries(deps: { db: Db }) {
  return {
    async list(accountId: string, opts: { cursor?: string; limit: number }) {
      const q = deps
        .db('audit_entries as e')
        // the acting user's email, as the trail remembers the user (UserRegistered)
        .leftJoin('audit_targets as u', function () {
          this.on('e.actor_type', '=', deps.db.raw('?', ['user'])).andOn('u.key', '=', deps.db.raw("'user:' || e.actor_id"));
        })
        .where('e.account_id', accountId);
      if (opts.cursor) q.andWhere('e.seq', '<', decodeCursor(opts.cursor));
      const rows = await q
        .orderBy('e.seq', 'desc')
        .limit(opts.limit + 1)
        .select('e.*', deps.db.raw("u.fields->>'email' AS actor_email"));
      const page = rows.slice(0, opts.limit);
      return {
        items: page.map((r) => ({
          at: new Date(r.at).toISOString(),
          actor: { type: r.actor_type, id: r.actor_id, ...(r.actor_email ? { email: r.actor_email } : {}) },
          ip: r.ip,
          action: r.action,
          target: { type: r.target_type, id: r.target_id },
          changes: r.changes,
        })),
        nextCursor: rows.length > opts.limit ? encodeCursor(page[page.length - 1].seq) : null,
      };
    },
  };
}
export type AuditQueries = ReturnType<typeof createAuditQueries>;
