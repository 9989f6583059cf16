import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Db } from '../adapters/db/knex.js';
import { badRequest } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import type { ChangeNotifier } from '../projections/change-notifier.js';
import { changesAfter, type ChangeRow } from '../read-models/message-changes.js';

export const MAX_WAIT_SECONDS = 30;
export const MAX_CHANGES_PAGE = 1000;

/** A position in the event log's commit order (the store's checkpoint pair), as decimal strings. */
interface LogPosition {
  commit: string;
  prepare: string;
}

const START: LogPosition = { commit: '0', prepare: '0' };
const CURSOR = /^[A-Za-z0-9_-]{1,200}$/;
const DECODED = /^v1\.(0|[1-9]\d{0,18})\.(0|[1-9]\d{0,18})\.([A-Za-z0-9_-]{22})$/;
const MAX_BIGINT = 9223372036854775807n;

/**
 * The cursor is the last event's log position, signed: opaque to the caller, and a position that was
 * never issued (made up, or edited) is refused rather than read from. It is the log's own position,
 * which a rebuild of the read model keeps, so a cursor outlives rebuilds.
 */
export function createChangeCursors(secret: string) {
  const mac = (commit: string, prepare: string) => createHmac('sha256', secret).update(`changes:v1:${commit}:${prepare}`).digest().subarray(0, 16).toString('base64url');
  return {
    encode(p: LogPosition): string {
      return Buffer.from(`v1.${p.commit}.${p.prepare}.${mac(p.commit, p.prepare)}`).toString('base64url');
    },
    decode(cursor: string): LogPosition {
      // Node's base64url decoder ignores stray trailing characters, so only the canonical spelling counts.
      const text = CURSOR.test(cursor) ? Buffer.from(cursor, 'base64url').toString('latin1') : '';
      const m = Buffer.from(text, 'latin1').toString('base64url') === cursor ? DECODED.exec(text) : null;
      if (m && BigInt(m[1]) <= MAX_BIGINT && BigInt(m[2]) <= MAX_BIGINT) {
        const expected = Buffer.from(mac(m[1], m[2]));
        const given = Buffer.from(m[3]);
        if (given.length === expected.length && timingSafeEqual(given, expected)) return { commit: m[1], prepare: m[2] };
      }
      throw badRequest('after is not a cursor this feed issued');
    },
  };
}

const iso = (v: unknown) => new Date(v as string).toISOString();

/**
 * The changes feed: what happened to the caller's messages in the event log's commit order, paged
 * by a cursor and optionally long-polled. A key sees its own messages, a dashboard user the account's.
 */
export function createMessageChanges(deps: { db: Db; notifier: ChangeNotifier; cursors: ReturnType<typeof createChangeCursors> }) {
  return {
    async changes(principal: Principal, options: { after?: string; wait: number; limit: number; signal?: AbortSignal }) {
      const after = options.after === undefined ? START : deps.cursors.decode(options.after);
      const deadline = Date.now() + options.wait * 1000;
      const scope = principal.kind === 'apiKey' ? { accountId: principal.accountId, apiKeyId: principal.apiKeyId } : { accountId: principal.accountId };
      let rows: ChangeRow[] = [];
      // Watch before each read: a change committed after the read wakes the wait (no connection held
      // meanwhile). While watching, the notifier's recent rows answer a cursor near the head.
      for (;;) {
        const watch = options.wait > 0 ? await deps.notifier.watch(scope, options.signal) : undefined;
        try {
          rows = (watch ? deps.notifier.recent(scope, after, options.limit) : undefined) ?? (await changesAfter(deps.db, principal, after, options.limit));
          const left = deadline - Date.now();
          if (!watch || rows.length > 0 || left <= 0 || options.signal?.aborted) break;
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([watch.changed, new Promise<void>((r) => (timer = setTimeout(r, left)))]);
          clearTimeout(timer);
        } finally {
          watch?.dispose();
        }
      }
      const last = rows[rows.length - 1];
      return {
        items: rows.map((r) => ({ id: r.event_id, messageLogId: r.message_id, type: r.type, occurredAt: iso(r.occurred_at), data: r.data })),
        nextCursor: deps.cursors.encode(last ? { commit: String(last.commit_pos), prepare: String(last.prepare_pos) } : after),
      };
    },
  };
}
export type MessageChanges = ReturnType<typeof createMessageChanges>;
