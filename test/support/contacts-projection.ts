import type { DomainEvent } from '../../src/domain/decider.js';
import type { Projection } from '../../src/projections/projection.js';
import type { RecordedEvent } from '../../src/ports/event-store.js';
import { createTestDatabase, type TestDatabase } from './db.js';

/**
 * given-events/then-rows for one projection: its tables are set up under a `_spec` suffix in a fresh
 * database, and `given(streamId, events)` runs them through `handle` in one transaction, positions
 * growing across calls like the event log's.
 */
export async function projectionSpec(projection: Projection) {
  const database: TestDatabase = await createTestDatabase();
  const t = (base: string) => `${base}_spec`;
  await database.db.transaction((trx) => projection.setup(trx, t));
  let position = 0n;
  return {
    db: database.db,
    t,
    async given(...batches: [streamId: string, events: DomainEvent[]][]) {
      const recorded: RecordedEvent[] = batches.flatMap(([streamId, events]) =>
        events.map((e, i) => {
          position++;
          return {
            id: `00000000-0000-4000-8000-${position.toString().padStart(12, '0')}`,
            streamId,
            revision: i,
            type: e.type,
            data: e.data,
            metadata: {},
            schemaVersion: 1,
            recordedAt: new Date(0),
            position: { commit: position, prepare: position },
          };
        }),
      );
      await database.db.transaction((trx) => projection.handle(recorded, trx, t));
    },
    rows: (base: string) => database.db(t(base)),
    drop: () => database.drop(),
  };
}
