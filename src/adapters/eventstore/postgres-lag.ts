import type { Db } from '../db/knex.js';
import type { Position } from '../../ports/event-store.js';
import { likePatterns } from './postgres-event-store.js';
import { LOG_HORIZON_SQL } from './log-horizon.js';

/** What a follower of the log reads: events after `after`, of these stream prefixes and types (absent: all). */
export interface FollowerAsk {
  after: Position;
  streamPrefixes?: string[];
  eventTypes?: string[];
}

/**
 * For each ask, how many of the newest `window` committed events of the PostgreSQL log it has still to
 * read: one statement for all of them, however long the log.
 */
export async function pendingInRecentEvents(db: Db, asks: FollowerAsk[], window: number): Promise<number[]> {
  const bindings: string[] = [];
  const columns = asks.map((a, i) => {
    const prefixes = JSON.stringify(a.streamPrefixes?.length ? likePatterns(a.streamPrefixes) : null);
    const types = JSON.stringify(a.eventTypes?.length ? a.eventTypes : null);
    // each list is bound twice: its null test and its elements
    bindings.push(a.after.commit.toString(), a.after.prepare.toString(), prefixes, prefixes, types, types);
    return `count(*) FILTER (WHERE (tx_id, global_position) > (?::xid8, ?::bigint)
      AND (?::jsonb = 'null' OR stream_id LIKE ANY (ARRAY(SELECT jsonb_array_elements_text(?::jsonb))))
      AND (?::jsonb = 'null' OR type = ANY (ARRAY(SELECT jsonb_array_elements_text(?::jsonb))))) AS f${i}`;
  });
  const { rows } = await db.raw(
    `WITH recent AS (
       SELECT tx_id, global_position, stream_id, type FROM events
       WHERE tx_id < ${LOG_HORIZON_SQL}
       ORDER BY tx_id DESC, global_position DESC
       LIMIT ${Number(window)}
     )
     SELECT ${columns.join(', ')} FROM recent`,
    bindings,
  );
  return asks.map((_, i) => Number(rows[0][`f${i}`]));
}
