import type { Db } from '../adapters/db/knex.js';
import type { Principal } from '../domain/principal.js';

/**
 * Up to `limit` changes of the caller's messages after a log position, in commit order: a key's own
 * messages, a dashboard user's whole account. Positions come back as text (they are 64-bit).
 */
export function changesAfter(db: Db, principal: Principal, after: { commit: string; prepare: string }, limit: number) {
  const q = db('message_changes').where('account_id', principal.accountId);
  if (principal.kind === 'apiKey') q.andWhere('api_key_id', principal.apiKeyId);
  return q
    .andWhereRaw('(commit_pos, prepare_pos) > (?::bigint, ?::bigint)', [after.commit, after.prepare])
    .orderBy([{ column: 'commit_pos' }, { column: 'prepare_pos' }])
    .limit(limit)
    .select('event_id', 'message_id', 'type', 'occurred_at', 'data', db.raw('commit_pos::text AS commit_pos'), db.raw('prepare_pos::text AS prepare_pos'));
}
