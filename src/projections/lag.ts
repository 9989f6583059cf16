import type { Db } from '../adapters/db/knex.js';
import { checkpointPosition } from '../adapters/db/checkpoint-position.js';
import { likePatterns } from '../adapters/eventstore/postgres-event-store.js';
import { START, type EventStore, type Position } from '../ports/event-store.js';

/** A follower of the event log: a projection (read model) or a process manager, with the events it reads. */
export interface LogFollower {
  kind: 'projection' | 'process_manager';
  name: string;
  streamPrefixes?: string[];
  eventTypes?: string[];
}

export const logFollower = (kind: LogFollower['kind'], of: { name: string; streamPrefixes?: string[]; eventTypes?: string[] }): LogFollower => ({
  kind,
  name: of.name,
  streamPrefixes: of.streamPrefixes,
  eventTypes: of.eventTypes,
});

/**
 * Lag is counted over the newest LAG_WINDOW events of the log, so a scrape costs one bounded read
 * however long the log and however far behind a follower is: a follower this far behind or more
 * reports LAG_WINDOW.
 */
export const LAG_WINDOW = 10_000;

/**
 * How many events each follower has still to handle: the events it reads (its streams and types)
 * recorded after its checkpoint. On the PostgreSQL log, one statement over the newest LAG_WINDOW events
 * for all followers; on another store, a read of up to LAG_WINDOW events per follower.
 */
export function createLagReader(deps: { db: Db; eventStore: EventStore; logInDatabase: boolean }) {
  async function checkpoints(): Promise<Map<string, Position>> {
    const { rows } = await deps.db.raw(`
      SELECT 'projection' AS kind, c.name, c.commit_pos, c.prepare_pos FROM projection_registry r
      JOIN projection_checkpoints c ON c.name = r.name AND c.generation = r.active_generation
      UNION ALL
      SELECT 'process_manager', name, commit_pos, prepare_pos FROM process_manager_checkpoints`);
    return new Map(rows.map((r: Record<string, any>) => [`${r.kind}:${r.name}`, checkpointPosition(r)]));
  }

  async function inDatabase(followers: LogFollower[], at: Map<string, Position>): Promise<number[]> {
    const bindings: string[] = [];
    const columns = followers.map((f, i) => {
      const p = at.get(`${f.kind}:${f.name}`) ?? START;
      const prefixes = JSON.stringify(f.streamPrefixes?.length ? likePatterns(f.streamPrefixes) : null);
      const types = JSON.stringify(f.eventTypes?.length ? f.eventTypes : null);
      // each list is bound twice: its null test and its elements
      bindings.push(p.commit.toString(), p.prepare.toString(), prefixes, prefixes, types, types);
      return `count(*) FILTER (WHERE (tx_id, global_position) > (?::xid8, ?::bigint)
        AND (?::jsonb = 'null' OR stream_id LIKE ANY (ARRAY(SELECT jsonb_array_elements_text(?::jsonb))))
        AND (?::jsonb = 'null' OR type = ANY (ARRAY(SELECT jsonb_array_elements_text(?::jsonb))))) AS f${i}`;
    });
    const { rows } = await deps.db.raw(
      `WITH recent AS (
         SELECT tx_id, global_position, stream_id, type FROM events
         WHERE tx_id < pg_snapshot_xmin(pg_current_snapshot())
         ORDER BY tx_id DESC, global_position DESC
         LIMIT ${LAG_WINDOW}
       )
       SELECT ${columns.join(', ')} FROM recent`,
      bindings,
    );
    return followers.map((_, i) => Number(rows[0][`f${i}`]));
  }

  return {
    async lag(followers: LogFollower[]): Promise<{ follower: LogFollower; events: number }[]> {
      if (followers.length === 0) return [];
      const at = await checkpoints();
      const counts = deps.logInDatabase
        ? await inDatabase(followers, at)
        : await Promise.all(
            followers.map(async (f) => {
              const after = at.get(`${f.kind}:${f.name}`) ?? START;
              return (await deps.eventStore.readAll({ after, limit: LAG_WINDOW, streamPrefixes: f.streamPrefixes, eventTypes: f.eventTypes })).length;
            }),
          );
      return followers.map((follower, i) => ({ follower, events: counts[i] }));
    },
  };
}
export type LagReader = ReturnType<typeof createLagReader>;
