import type { Db } from '../adapters/db/knex.js';
import { badRequest } from '../domain/errors.js';

/** A bigint column's largest value: a longer sequence number was never issued, and PostgreSQL refuses it (a 500). */
const MAX_SEQ = 9223372036854775807n;

function decodeCursor(cursor: string): string {
  const seq = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^[1-9]\d{0,18}$/.test(seq) || BigInt(seq) > MAX_SEQ) throw badRequest('cursor is invalid');
  return seq;
}
const encodeCursor = (seq: string | number) => Buffer.from(String(seq)).toString('base64url');

/** What an auditor narrows the trail to; every filter given must hold. */
export interface AuditFilters {
  /** one action (`webhook.deleted`), or a family of them (`webhook.*`) */
  action?: string;
  /** who acted: a user's or an API key's id, or `system` */
  actor?: string;
  /** what was acted on: a key's, webhook's, campaign's… id, a person's keyed hash */
  target?: string;
  from?: string;
  to?: string;
}

/** The audit trail of one account (read model `audit`), newest first. */
export function createAuditQueries(deps: { db: Db }) {
  return {
    async list(accountId: string, opts: AuditFilters & { cursor?: string; limit: number }) {
      const q = deps
        .db('audit_entries as e')
        // the acting user's email, as the trail remembers the user (UserRegistered)
        .leftJoin('audit_targets as u', function () {
          this.on('e.actor_type', '=', deps.db.raw('?', ['user'])).andOn('u.key', '=', deps.db.raw("'user:' || e.actor_id"));
        })
        .where('e.account_id', accountId);
      if (opts.cursor) q.andWhere('e.seq', '<', decodeCursor(opts.cursor));
      if (opts.action?.endsWith('.*')) q.andWhere('e.action', 'like', `${opts.action.slice(0, -1)}%`);
      else if (opts.action) q.andWhere('e.action', opts.action);
      // `system` is every actor of that type: the service itself, and the command-line tools (`cli`)
      if (opts.actor === 'system') q.andWhere('e.actor_type', 'system');
      else if (opts.actor) q.andWhere('e.actor_id', opts.actor);
      if (opts.target) q.andWhere('e.target_id', opts.target);
      if (opts.from) q.andWhere('e.at', '>=', opts.from);
      if (opts.to) q.andWhere('e.at', '<', opts.to);
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
