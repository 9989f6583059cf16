import type { Logger } from 'pino';
import type { Config } from './config/env.js';
import { createDb, migrate, type Db } from './adapters/db/knex.js';
import { startEmbeddedPostgres } from './adapters/db/embedded-postgres.js';
import { waitForDatabase } from './adapters/db/probe.js';
import { predatesSealing } from './adapters/db/schema-history.js';
import { StartupError } from './startup-error.js';
import { createPgAttachmentStore } from './adapters/db/attachment-store.js';
import type { AttachmentStore } from './ports/attachment-store.js';
import { createSendCounters, type SendCounters } from './adapters/db/send-counters.js';
import type { EventStore } from './ports/event-store.js';
import type { JobQueue } from './ports/job-queue.js';
import { createJobQueue } from './adapters/queue/index.js';
import { createEventStore } from './adapters/eventstore/index.js';
import { createRateLimiters } from './adapters/rate-limit/index.js';
import type { RateLimiters } from './ports/rate-limiter.js';
import { openPrivacy, type Privacy } from './adapters/crypto/privacy.js';
import { createPgKeyStore } from './adapters/crypto/pg-key-store.js';

/** How long a process starting beside its PostgreSQL (compose, a supervisor) waits for it to accept connections. */
const DATABASE_STARTUP_WAIT_MS = 60_000;

export interface Infrastructure {
  /** connection string of the read-model database (also the default event store and job queue) */
  databaseUrl: string;
  db: Db;
  /** personal data sealed under per-person keys (docs/privacy.md) */
  eventStore: EventStore;
  /** the data keys and the keyed hash of addresses */
  privacy: Privacy;
  /** pg-boss on the same PostgreSQL, or BullMQ with REDIS_URL */
  queue: JobQueue;
  /** the daily send caps (their own connections: see createSendCounters) */
  counters: SendCounters;
  /**
   * The same event store and send caps on connections and statement batches of their own, for bulk
   * sends (a campaign's fan-out): an API send batched with others never waits behind a statement of
   * dozens of campaign messages, nor shares one with them.
   */
  bulk: { eventStore: EventStore; counters: SendCounters };
  /** attempt counters shared by every process: Redis with REDIS_URL, else PostgreSQL */
  limiters: RateLimiters;
  /** attachment bytes, kept apart from the event log */
  attachmentStore: AttachmentStore;
  /** the database was first run by a version without sealing: contact and suppression streams of then are named by address */
  streamsNamedByAddress: boolean;
  /** set when the PostgreSQL is the embedded one of DATA_DIR */
  embedded?: {
    databaseDir: string;
    /** false when another process (the running service) started it */
    started: boolean;
    /** where an earlier DATA_DIR's data at the same path was moved aside */
    setAside?: string;
  };
  close(): Promise<void>;
}

/**
 * Connects the stores every role needs: PostgreSQL (DATABASE_URL, or an embedded server with its data
 * under DATA_DIR), migrated, and the event store (PostgreSQL, or EventStoreDB with EVENTSTORE_URL).
 */
export async function openInfrastructure(
  config: Config,
  options: {
    migrate?: boolean;
    /**
     * A one-off command (replay, rebuild, admin): it works on the data the service has, so it uses
     * the embedded server the running service started, or starts it only for its own duration, and
     * never creates a new empty one.
     */
    tool?: boolean;
    /** the job queue's background errors (it retries by itself): for logging */
    onQueueError?: (err: unknown) => void;
    /** where the embedded PostgreSQL's crash and restart are told */
    logger?: Logger;
  } = {},
): Promise<Infrastructure> {
  let databaseUrl = config.DATABASE_URL;
  let embedded: Infrastructure['embedded'];
  let stopEmbedded: (() => Promise<void>) | undefined;
  if (databaseUrl) await waitForDatabase(databaseUrl, { waitMs: options.tool ? 0 : DATABASE_STARTUP_WAIT_MS, logger: options.logger });
  else {
    const server = await startEmbeddedPostgres({
      dataDir: config.DATA_DIR,
      port: config.EMBEDDED_PG_PORT,
      attach: options.tool,
      create: !options.tool,
      logger: options.logger,
    });
    databaseUrl = server.url;
    embedded = { databaseDir: server.databaseDir, started: server.started, ...(server.setAside ? { setAside: server.setAside } : {}) };
    stopEmbedded = server.stop;
  }
  const db = createDb(databaseUrl, { logger: options.logger });
  let privacy: Privacy;
  let keyWriter: Db | undefined;
  let streamsNamedByAddress: boolean;
  try {
    if (options.migrate !== false) await migrate(db);
    streamsNamedByAddress = await predatesSealing(db);
    // Keys are committed without waiting for the WAL flush only when the events sealed under them
    // are appended to this same PostgreSQL (their commit flushes it): not beside EventStoreDB.
    keyWriter = config.EVENTSTORE_URL ? undefined : createDb(databaseUrl, { pool: 4, settings: { synchronous_commit: 'off' }, logger: options.logger });
    privacy = await openPrivacy({ encryptionKey: config.ENCRYPTION_KEY, previousKey: config.ENCRYPTION_KEY_PREVIOUS, dataDir: config.DATA_DIR, store: createPgKeyStore(db, keyWriter) });
  } catch (err) {
    await keyWriter?.destroy().catch(() => {});
    await db.destroy().catch(() => {});
    await stopEmbedded?.().catch(() => {});
    throw err;
  }
  const bareStore = createEventStore({ databaseUrl, eventstoreUrl: config.EVENTSTORE_URL });
  // On PostgreSQL a new key is stored in the transaction of the first append sealed under it.
  const eventStore = config.SEAL_PERSONAL_DATA ? privacy.seal(bareStore, { keysWithEvents: !config.EVENTSTORE_URL }) : bareStore;
  const queue = createJobQueue({ databaseUrl, redisUrl: config.REDIS_URL, redisPrefix: config.REDIS_PREFIX, onError: options.onQueueError });
  const counters = createSendCounters(databaseUrl, { logger: options.logger });
  // Two connections each: a fan-out has one batch of each kind in flight at a time, and the next gathering.
  const bulkStore = createEventStore({ databaseUrl, eventstoreUrl: config.EVENTSTORE_URL, poolSize: 2 });
  const bulk = { eventStore: config.SEAL_PERSONAL_DATA ? privacy.seal(bulkStore) : bulkStore, counters: createSendCounters(databaseUrl, { pool: 2, logger: options.logger }) };
  const limiters = createRateLimiters({ db, redisUrl: config.REDIS_URL, redisPrefix: config.REDIS_PREFIX });
  return {
    databaseUrl,
    db,
    eventStore,
    privacy,
    queue,
    counters,
    bulk,
    limiters,
    attachmentStore: createPgAttachmentStore(db),
    streamsNamedByAddress,
    embedded,
    async close() {
      await queue.close();
      await counters.close();
      await bulk.counters.close();
      await bulk.eventStore.close();
      await limiters.close();
      await eventStore.close();
      await keyWriter?.destroy();
      await db.destroy();
      await stopEmbedded?.();
    },
  };
}
