import PgBoss from 'pg-boss';
import { deterministicEventId } from '../../domain/event-id.js';
import type { EnqueueOptions, JobHandler, JobQueue, WorkOptions } from '../../ports/job-queue.js';

export interface PgBossQueueOptions {
  connectionString: string;
  schema?: string;
  /** a handler that throws is retried after this delay (default 1 s), up to retryLimit times */
  retryDelaySeconds?: number;
  retryLimit?: number;
  /**
   * A job still active this long after it started is considered lost with its worker and runs again
   * (default 300 s; handlers must finish well within it).
   */
  expireInSeconds?: number;
  /** how often expired jobs are looked for (default 60 s) */
  maintenanceIntervalSeconds?: number;
  pollingIntervalSeconds?: number;
}

/**
 * The PostgreSQL job queue (pg-boss 10, Node 20), the default. A jobId becomes the pg-boss job's own
 * UUID (derived deterministically), so a second enqueue with the same jobId is refused by the
 * database's primary key. Concurrency is N single-job workers, so one failing job fails alone.
 */
export function createPgBossQueue(options: PgBossQueueOptions): JobQueue {
  const boss = new PgBoss({
    connectionString: options.connectionString,
    schema: options.schema ?? 'pgboss',
    max: 6,
    supervise: true,
    maintenanceIntervalSeconds: options.maintenanceIntervalSeconds ?? 60,
    schedule: false,
  });
  boss.on('error', () => {
    // pg-boss reports transient connection errors here; it reconnects by itself.
  });
  let started: Promise<unknown> | undefined;
  const queues = new Map<string, Promise<void>>();
  const localWorkers = new Map<string, string[]>();
  let closing = false;

  const start = () => (started ??= boss.start());

  function ensureQueue(name: string): Promise<void> {
    if (!queues.has(name)) {
      queues.set(
        name,
        (async () => {
          await start();
          await boss.createQueue(name, {
            name,
            policy: 'standard',
            retryLimit: options.retryLimit ?? 1000,
            retryDelay: options.retryDelaySeconds ?? 1,
            retryBackoff: false,
            expireInSeconds: options.expireInSeconds ?? 300,
          });
        })().catch((err) => {
          queues.delete(name);
          throw err;
        }),
      );
    }
    return queues.get(name)!;
  }

  return {
    async enqueue<T>(name: string, data: T, opts: EnqueueOptions = {}) {
      await ensureQueue(name);
      const delay = opts.delayMs ?? 0;
      await boss.send(name, (data ?? {}) as object, {
        ...(opts.jobId ? { id: deterministicEventId('job', name, opts.jobId) } : {}),
        ...(delay > 0 ? { startAfter: new Date(Date.now() + delay) } : {}),
      });
      // Wake this process's workers now instead of at their next poll.
      if (delay <= 0) for (const id of localWorkers.get(name) ?? []) boss.notifyWorker(id);
    },

    async work<T>(name: string, handler: JobHandler<T>, opts: WorkOptions = {}) {
      await ensureQueue(name);
      const ids: string[] = [];
      for (let i = 0; i < (opts.concurrency ?? 1); i++) {
        ids.push(
          await boss.work<T>(
            name,
            { batchSize: 1, pollingIntervalSeconds: options.pollingIntervalSeconds ?? 0.5, includeMetadata: true },
            async ([job]) => {
              await handler({ id: job.id, name: job.name, data: job.data, attempt: job.retryCount + 1 });
            },
          ),
        );
      }
      localWorkers.set(name, [...(localWorkers.get(name) ?? []), ...ids]);
    },

    async close() {
      if (closing || !started) return;
      closing = true;
      await started.catch(() => {});
      await boss.stop({ graceful: true, wait: true, timeout: 30_000 });
    },
  };
}
