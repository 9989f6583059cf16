import PgBoss from 'pg-boss';
import { deterministicEventId } from '../../domain/event-id.js';
import type { EnqueueOptions, JobHandler, JobQueue, WorkOptions } from '../../ports/job-queue.js';
import { createGroupCommit } from '../../group-commit.js';
import { startPgBossDispatcher, type PgBossDispatcher } from './pg-boss-dispatcher.js';

const DEADLOCK_DETECTED = '40P01';

export interface PgBossQueueOptions {
  connectionString: string;
  /** PostgreSQL schema holding pg-boss's tables (default `pgboss`) */
  schema?: string;
  /**
   * A handler that throws runs again after this delay (default 1 s; pg-boss counts whole seconds, so
   * it is rounded up), for up to `maxAttempts` runs in all (default 100,000: days of retrying, so an
   * outage does not turn into lost jobs; business retry schedules are the handlers' own).
   */
  retryDelayMs?: number;
  maxAttempts?: number;
  /**
   * A run still unfinished this long after it started is taken for lost with its worker and is run
   * again (default 30 s, rounded up to seconds, at most 23 h). Lost runs are looked for every
   * `maintenanceIntervalMs` (default 30 s) by whichever process's turn it is, so a job whose worker
   * died runs again within about expireAfterMs + maintenanceIntervalMs + retryDelayMs: about a
   * minute, as BullMQ's stalled-job check does. A slower handler gets a second, concurrent run, which
   * is harmless here: every handler first claims its side effect under a lease its run keeps renewing,
   * so the second run finds it taken and ends. (With 5 min, a job fetched by a worker killed before it
   * claimed the effect kept that message from its provider for five and a half minutes.)
   */
  expireAfterMs?: number;
  maintenanceIntervalMs?: number;
  /** how often an idle worker looks for due jobs enqueued by other processes (default 500 ms) */
  pollingIntervalMs?: number;
  /** connections in pg-boss's pool (default 5) */
  poolSize?: number;
  /** handler failures and background errors; the queue itself retries, this is for logging */
  onError?: (err: unknown) => void;
}

export const DEFAULT_EXPIRE_AFTER_MS = 30_000;

const toSeconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/**
 * The PostgreSQL job queue (pg-boss 10, the newest line that runs on Node 20), the default.
 *
 * Deduplication: a jobId becomes the pg-boss job's own UUID (derived deterministically, since our
 * ids are arbitrary strings), and pg-boss inserts with ON CONFLICT DO NOTHING on its (queue, id)
 * primary key, so a second enqueue, concurrent or not, is a no-op. (`singletonKey` would not do: it
 * does not deduplicate on a standard queue.) A finished job keeps its id until pg-boss archives it
 * (12 h after completion), which is longer than the port promises, never shorter.
 *
 * Retry and expiry options are set on each job rather than on the queue: pg-boss keeps a queue's
 * options from its first creation, and a changed setting must reach new jobs.
 */
export function createPgBossQueue(options: PgBossQueueOptions): JobQueue {
  const onError = options.onError ?? (() => {});
  // `options` reaches node-postgres's pool, which pg-boss builds from this object as it is.
  const config: PgBoss.ConstructorOptions & { options: string } = {
    connectionString: options.connectionString,
    // The job tables are bookkeeping, not the truth: what must happen is a side effect recorded in the
    // service's own transactions, the sweeper queues again an effect whose job was lost, and a job
    // run twice finds its effect claimed or done. So pg-boss's writes (insert, fetch, complete: three
    // commits per job) do not wait for the WAL flush; a crash of PostgreSQL loses at most its last
    // fraction of a second of them.
    options: '-c synchronous_commit=off',
    schema: options.schema ?? 'pgboss',
    max: options.poolSize ?? 5,
    supervise: true,
    maintenanceIntervalSeconds: toSeconds(options.maintenanceIntervalMs ?? 30_000),
    schedule: false,
  };
  const boss = new PgBoss(config);
  boss.on('error', onError);

  const jobOptions = {
    retryLimit: Math.max(0, (options.maxAttempts ?? 100_000) - 1),
    retryDelay: toSeconds(options.retryDelayMs ?? 1000),
    retryBackoff: false,
    expireInSeconds: Math.min(toSeconds(options.expireAfterMs ?? DEFAULT_EXPIRE_AFTER_MS), 23 * 3600),
  };
  const pollingIntervalMs = options.pollingIntervalMs ?? 500;

  let started: Promise<unknown> | undefined;
  let closed = false;
  const queues = new Map<string, Promise<void>>();
  const dispatchers = new Map<string, PgBossDispatcher[]>();
  // A process manager enqueues a batch of side effects at once (a suppression fans out to every
  // webhook subscription): one multi-row insert instead of one per job. pg-boss's insert keeps
  // send()'s ON CONFLICT DO NOTHING on the job id.
  const inserts = createGroupCommit<PgBoss.JobInsert>((jobs) => boss.insert(jobs));

  const schema = options.schema ?? 'pgboss';
  const analyzer = createBacklogAnalyzer(boss, schema, onError);
  const start = () =>
    (started ??= boss
      .start()
      .then(() => addFetchOrderIndex(boss, schema))
      .catch((err) => {
        started = undefined;
        throw err;
      }));

  // pg-boss 10 silently drops a job sent to a queue that does not exist yet, so every queue is
  // created (idempotently) before its first use by this process. Processes starting together on a
  // new database deadlock there now and then (each creating a queue's partition while inserting
  // another's row): PostgreSQL cancels one, which tries again.
  function ensureQueue(name: string): Promise<void> {
    let ready = queues.get(name);
    if (!ready) {
      ready = (async () => {
        await start();
        for (let attempt = 1; ; attempt++) {
          try {
            await boss.createQueue(name, { name, policy: 'standard' });
            return;
          } catch (err) {
            if ((err as { code?: string }).code !== DEADLOCK_DETECTED || attempt >= 10) throw err;
            await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 100 * attempt));
          }
        }
      })();
      ready.catch(() => queues.delete(name));
      queues.set(name, ready);
    }
    return ready;
  }

  return {
    // Handlers still running during close() may enqueue (their own retry schedule), so enqueue is
    // not refused while closing.
    async enqueue<T>(name: string, data: T, opts: EnqueueOptions = {}) {
      await ensureQueue(name);
      const delayMs = Math.ceil(opts.delayMs ?? 0);
      await inserts.add({
        name,
        data: data as object,
        ...jobOptions,
        ...(opts.jobId !== undefined ? { id: deterministicEventId('job-queue', opts.jobId) } : {}),
        // An interval from the database's now() (a number is read as seconds), so the delay does not
        // depend on this host's clock.
        ...(delayMs > 0 ? { startAfter: String(delayMs / 1000) } : {}),
      });
      if (delayMs <= 0) for (const d of dispatchers.get(name) ?? []) d.notify();
    },

    async depth(name: string) {
      await ensureQueue(name);
      return (await boss.getQueueSize(name)) ?? 0;
    },

    async work<T>(name: string, handler: JobHandler<T>, opts: WorkOptions = {}) {
      if (closed) throw new Error('job queue is closed');
      await ensureQueue(name);
      const dispatcher = startPgBossDispatcher({
        boss,
        name,
        onBacklog: () => analyzer.backlogSeen(name),
        handler,
        concurrency: Math.max(1, opts.concurrency ?? 1),
        pollingIntervalMs,
        onError,
      });
      dispatchers.set(name, [...(dispatchers.get(name) ?? []), dispatcher]);
    },

    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...dispatchers.values()].flat().map((d) => d.stop()));
      if (!started) return;
      try {
        await started;
      } catch {
        return;
      }
      await inserts.drain();
      await analyzer.idle();
      await boss.stop({ graceful: true, wait: true });
    },
  };
}

/**
 * Keeps a queue's planner statistics in step with its backlog. pg-boss's statements pick their index
 * by the estimated number of the queue's jobs; on a partition analysed while it was nearly empty (a
 * young queue, or one idle until a burst) the estimate is a dozen, every index on `name` looks alike,
 * and fetch and complete read the whole queue for each batch (a 3,000-job burst: 240 index entries
 * read per job). Autovacuum analyses too late for a burst (a minute's nap, then 10 % of the table),
 * so a dispatcher that finds a backlog has the queue's partition analysed, at most once per interval,
 * in the background: ANALYZE samples a bounded number of rows and blocks no reader or writer.
 */
function createBacklogAnalyzer(boss: PgBoss, schema: string, onError: (err: unknown) => void, intervalMs = 10_000) {
  const db = boss.getDb() as { executeSql(sql: string, values?: unknown[]): Promise<{ rows: Record<string, string>[] }> };
  const last = new Map<string, number>();
  let running: Promise<void> = Promise.resolve();
  return {
    backlogSeen(name: string): void {
      const now = Date.now();
      if (now - (last.get(name) ?? -Infinity) < intervalMs) return;
      last.set(name, now);
      running = running.then(async () => {
        const { rows } = await db.executeSql(`SELECT partition_name FROM ${quoteIdentifier(schema)}.queue WHERE name = $1`, [name]);
        if (rows[0]?.partition_name) await db.executeSql(`ANALYZE ${quoteIdentifier(schema)}.${quoteIdentifier(rows[0].partition_name)} (${PLANNED_JOB_COLUMNS})`);
      }).catch(onError);
    },
    /** waits for the analyses asked for so far */
    idle: () => running,
  };
}

// The columns fetch and complete select and order jobs by. The row count is taken whatever the list;
// statistics of the other twenty (payloads, outputs, timestamps nobody filters on) cost a 22,000-job
// partition's ANALYZE three quarters of its 40 ms, a burst of CPU in the middle of the burst it serves.
const PLANNED_JOB_COLUMNS = 'id, name, state, priority, start_after, created_on';

const quoteIdentifier = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * pg-boss fetches the next jobs `ORDER BY priority desc, created_on, id`, but its only index for
 * ready jobs is on (name, start_after): every fetch sorted the queue's whole backlog (3,000 pending
 * webhook deliveries made each fetch a multi-millisecond sort, the largest database cost of a fan-out).
 * An index in fetch order lets it read the first rows and stop. Created on the partitioned parent, so
 * every queue's partition has it, present and future; several processes starting at once may race
 * to create it, hence the advisory lock.
 */
async function addFetchOrderIndex(boss: PgBoss, schema: string): Promise<void> {
  const db = boss.getDb() as { executeSql(sql: string, values?: unknown[]): Promise<unknown> };
  const quoted = quoteIdentifier(schema);
  await db.executeSql(`
    DO $$ BEGIN
      PERFORM pg_advisory_xact_lock(hashtext('courier-ledger:pgboss-fetch-index'));
      CREATE INDEX IF NOT EXISTS job_fetch_order ON ${quoted}.job (name, priority DESC, created_on, id) WHERE state < 'active';
    END $$`);
}
