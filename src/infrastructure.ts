import type { Config } from './config/env.js';
import { createDb, migrate, type Db } from './adapters/db/knex.js';
import { startEmbeddedPostgres } from './adapters/db/embedded-postgres.js';
import { createSendCounters, type SendCounters } from './adapters/db/send-counters.js';
import type { EventStore } from './ports/event-store.js';
import type { JobQueue } from './ports/job-queue.js';
import { createJobQueue } from './adapters/queue/index.js';
import { createEventStore } from './adapters/eventstore/index.js';
import { createRateLimiters } from './adapters/rate-limit/index.js';
import type { RateLimiters } from './ports/rate-limiter.js';

export interface Infrastructure {
  /** connection string of the read-model database (also the default event store and job queue) */
  databaseUrl: string;
  db: Db;
  eventStore: EventStore;
  /** pg-boss on the same PostgreSQL, or BullMQ with REDIS_URL */
  queue: JobQueue;
  /** the daily send caps (their own connections: see createSendCounters) */
  counters: SendCounters;
  /** attempt counters shared by every process: Redis with REDIS_URL, else PostgreSQL */
  limiters: RateLimiters;
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
  const eventStore = createEventStore({ databaseUrl, eventstoreUrl: config.EVENTSTORE_URL });
  const queue = createJobQueue({ databaseUrl, redisUrl: config.REDIS_URL });
  const counters = createSendCounters(databaseUrl);
  const limiters = createRateLimiters({ db, redisUrl: config.REDIS_URL });
  return {
    databaseUrl,
    db,
    eventStore,
    queue,
    counters,
    limiters,
    embedded: Boolean(stopEmbedded),
    async close() {
      await queue.close();
      await counters.close();
      await limiters.close();
      await eventStore.close();
      await db.destroy();
      await stopEmbedded?.();
    },
  };
}
