import type { Config } from './config/env.js';
import { createDb, migrate, type Db } from './adapters/db/knex.js';
import { startEmbeddedPostgres } from './adapters/db/embedded-postgres.js';
import { createPostgresEventStore } from './adapters/eventstore/postgres-event-store.js';
import type { EventStore } from './ports/event-store.js';

export interface Infrastructure {
  /** connection string of the read-model database (also the default event store and job queue) */
  databaseUrl: string;
  db: Db;
  eventStore: EventStore;
  /** true when this process started the embedded PostgreSQL */
  embedded: boolean;
  close(): Promise<void>;
}

/**
 * Connects the stores every role needs: PostgreSQL (DATABASE_URL, or an embedded server with its data
 * under DATA_DIR), migrated, and the event store (PostgreSQL, or EventStoreDB with EVENTSTORE_URL).
 */
export async function openInfrastructure(config: Config, options: { migrate?: boolean } = {}): Promise<Infrastructure> {
  let databaseUrl = config.DATABASE_URL;
  let stopEmbedded: (() => Promise<void>) | undefined;
  if (!databaseUrl) {
    const pg = await startEmbeddedPostgres({ dataDir: config.DATA_DIR, port: config.EMBEDDED_PG_PORT });
    databaseUrl = pg.url;
    stopEmbedded = pg.stop;
  }
  const db = createDb(databaseUrl);
  if (options.migrate !== false) await migrate(db);
  const eventStore = createPostgresEventStore({ connectionString: databaseUrl });
  return {
    databaseUrl,
    db,
    eventStore,
    embedded: Boolean(stopEmbedded),
    async close() {
      await eventStore.close();
      await db.destroy();
      await stopEmbedded?.();
    },
  };
}
