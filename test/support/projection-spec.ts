import type { DomainEvent } from '../../src/domain/decider.js';
import type { Projection } from '../../src/projections/projection.js';
import type { RecordedEvent } from '../../src/ports/event-store.js';
import { createTestDatabase } from './db.js';

export interface ProjectionSpecOptions {
  /** the stream a `given` key names (default: the key itself) */
  streamId?: (key: string) => string;
  /** when the event at a position was recorded (default: the epoch) */
  recordedAt?: (position: bigint) => Date;
}

/**
 * given-events/then-rows for one projection: its tables set up under a `_spec` suffix in a fresh
 * database; each `given` call is one batch through `handle`, in one transaction, with positions
 * growing across calls and revisions counted per stream, as in the event log. As from the runner's
 * subscription, only the events of the streams and types the projection follows reach `handle`.
 */
export async function projectionSpec(projection: Projection, options: ProjectionSpecOptions = {}) {
  const streamIdOf = options.streamId ?? ((key: string) => key);
  const recordedAt = options.recordedAt ?? (() => new Date(0));
  const database = await createTestDatabase();
  const t = (base: string) => `${base}_spec`;
  await database.db.transaction((trx) => projection.setup(trx, t));
  let position = 0n;
  const revisions = new Map<string, number>();
  return {
    db: database.db,
    t,
    /** each event may carry the `metadata` it was recorded with (actor, client address) */
    async given(...batches: [key: string, events: (DomainEvent & { metadata?: RecordedEvent['metadata'] })[]][]) {
      const recorded: RecordedEvent[] = batches.flatMap(([key, events]) =>
        events.map((e) => {
          position++;
          const streamId = streamIdOf(key);
          const revision = (revisions.get(streamId) ?? -1) + 1;
          revisions.set(streamId, revision);
          return {
            id: `00000000-0000-4000-8000-${position.toString().padStart(12, '0')}`,
            streamId,
            revision,
            type: e.type,
            data: e.data,
            metadata: e.metadata ?? {},
            schemaVersion: 1,
            recordedAt: recordedAt(position),
            position: { commit: position, prepare: position },
          };
        }),
      );
      const followed = recorded.filter(
        (e) =>
          (!projection.streamPrefixes || projection.streamPrefixes.some((p) => e.streamId.startsWith(p))) &&
          (!projection.eventTypes || projection.eventTypes.includes(e.type)),
      );
      await database.db.transaction((trx) => projection.handle(followed, trx, t));
    },
    rows: (base: string) => database.db(t(base)),
    drop: () => database.drop(),
  };
}
