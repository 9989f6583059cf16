import type { Db } from '../adapters/db/knex.js';
import { checkpointPosition } from '../adapters/db/checkpoint-position.js';
import { pendingInRecentEvents } from '../adapters/eventstore/postgres-lag.js';
import { START, type EventStore, type Position } from '../ports/event-store.js';

/** A follower of the event log: a projection (read model) or a process manager, with the events it reads. */
export interface LogFollower {
  kind: 'projection' | 'process_manager';
  name: string;
  streamPrefixes?: string[];
  eventTypes?: string[];
  /** a projection's code version: the live read model must have it for this process to read it */
  version?: number;
}

export const logFollower = (kind: LogFollower['kind'], of: { name: string; streamPrefixes?: string[]; eventTypes?: string[]; version?: number }): LogFollower => ({
  kind,
  name: of.name,
  streamPrefixes: of.streamPrefixes,
  eventTypes: of.eventTypes,
  version: of.version,
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
  /** Where each follower has got to, and a read model's live version. */
  async function checkpoints(): Promise<Map<string, { at: Position; version: number | null }>> {
    const { rows } = await deps.db.raw(`
      SELECT 'projection' AS kind, c.name, c.commit_pos, c.prepare_pos, r.version FROM projection_registry r
      JOIN projection_checkpoints c ON c.name = r.name AND c.generation = r.active_generation
      UNION ALL
      SELECT 'process_manager', name, commit_pos, prepare_pos, NULL FROM process_manager_checkpoints`);
    return new Map(rows.map((r: Record<string, any>) => [`${r.kind}:${r.name}`, { at: checkpointPosition(r), version: r.version }]));
  }

  return {
    /**
     * Each follower's pending events and its checkpoint (where it has got to); for a read model, the
     * version of its live generation (another than the follower's while a release rebuilds it).
     */
    async lag(followers: LogFollower[]): Promise<{ follower: LogFollower; events: number; at: Position; liveVersion: number | null }[]> {
      if (followers.length === 0) return [];
      const seen = await checkpoints();
      const asks = followers.map((f) => ({ after: seen.get(`${f.kind}:${f.name}`)?.at ?? START, streamPrefixes: f.streamPrefixes, eventTypes: f.eventTypes }));
      const counts = deps.logInDatabase
        ? await pendingInRecentEvents(deps.db, asks, LAG_WINDOW)
        : await Promise.all(asks.map(async (ask) => (await deps.eventStore.readAll({ ...ask, limit: LAG_WINDOW })).length));
      return followers.map((follower, i) => ({ follower, events: counts[i], at: asks[i].after, liveVersion: seen.get(`${follower.kind}:${follower.name}`)?.version ?? null }));
    },
  };
}
export type LagReader = ReturnType<typeof createLagReader>;
