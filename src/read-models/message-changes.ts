import type { Knex } from 'knex';
import type { Db } from '../adapters/db/knex.js';
import type { Principal } from '../domain/principal.js';

/** A row of the feed as the API answers with it; positions as text (they are 64-bit). */
export interface ChangeRow {
  event_id: string;
  message_id: string;
  type: string;
  occurred_at: Date;
  data: Record<string, unknown>;
  commit_pos: string;
  prepare_pos: string;
}

/** The columns of a `ChangeRow`, for every reader of the feed's table. */
export const CHANGE_COLUMNS = (db: Db): (string | Knex.Raw)[] => [
  'event_id',
  'message_id',
  'type',
  'occurred_at',
  'data',
  db.raw('commit_pos::text AS commit_pos'),
  db.raw('prepare_pos::text AS prepare_pos'),
];

/**
 * The feed's order, by the table's own columns: the rows carry their positions as text under the same
 * names, and a bare `ORDER BY commit_pos` would sort by that text ('1008' before '998').
 */
export const IN_LOG_ORDER = ['message_changes.commit_pos', 'message_changes.prepare_pos'];

/**
 * Up to `limit` changes of the caller's messages after a log position, in commit order: a key's own
 * messages, a dashboard user's whole account.
 */
export function changesAfter(db: Db, principal: Principal, after: { commit: string; prepare: string }, limit: number): Promise<ChangeRow[]> {
  const q = db('message_changes').where('account_id', principal.accountId);
  if (principal.kind === 'apiKey') q.andWhere('api_key_id', principal.apiKeyId);
  return q
    .andWhereRaw('(commit_pos, prepare_pos) > (?::bigint, ?::bigint)', [after.commit, after.prepare])
    .orderBy(IN_LOG_ORDER)
    .limit(limit)
    .select(...CHANGE_COLUMNS(db));
}
