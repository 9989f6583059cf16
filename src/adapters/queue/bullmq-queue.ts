import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { EnqueueOptions, JobHandler, JobQueue, WorkOptions } from '../../ports/job-queue.js';

export interface BullMqQueueOptions {
  redisUrl: string;
  /** key prefix, so several deployments (or test runs) share one Redis */
  prefix?: string;
  /** a handler that throws is retried after this delay (default 1 s), up to `attempts` runs */
  retryDelayMs?: number;
  attempts?: number;
  /**
   * A job whose worker stops renewing its lock for this long is stalled and runs again (defaults 30 s
   * lock, checked every 30 s); a stalled job is re-run many times rather than failed.
   */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
}

// BullMQ refuses custom ids containing ':' (its key separator); encoding keeps distinct ids distinct.
const encodeJobId = (id: string) => encodeURIComponent(id);

/** The Redis job queue (BullMQ), used when REDIS_URL is set. */
export function createBullMqQueue(options: BullMqQueueOptions): JobQueue {
  const connection = new Redis(options.redisUrl, { maxRetriesPerRequest: null, lazyConnect: false });
  connection.on('error', () => {
    // ioredis reconnects by itself; errors surface on the calls that need the connection.
  });
  const prefix = options.prefix ?? 'courier';
  const queues = new Map<string, Queue>();
  const workers: Worker[] = [];
  const workerConnections: Redis[] = [];

  const queueFor = (name: string) => {
    if (!queues.has(name)) queues.set(name, new Queue(name, { connection, prefix }));
    return queues.get(name)!;
  };

  return {
    async enqueue<T>(name: string, data: T, opts: EnqueueOptions = {}) {
      await queueFor(name).add(name, data ?? {}, {
        ...(opts.jobId ? { jobId: encodeJobId(opts.jobId) } : {}),
        ...(opts.delayMs && opts.delayMs > 0 ? { delay: opts.delayMs } : {}),
        attempts: options.attempts ?? 1000,
        backoff: { type: 'fixed', delay: options.retryDelayMs ?? 1000 },
        removeOnComplete: true,
        removeOnFail: { age: 14 * 24 * 3600 },
      });
    },

    async work<T>(name: string, handler: JobHandler<T>, opts: WorkOptions = {}) {
      const workerConnection = connection.duplicate();
      workerConnections.push(workerConnection);
      const worker = new Worker(
        name,
        async (job) => {
          await handler({ id: job.id ?? '', name: job.name, data: job.data as T, attempt: job.attemptsMade + 1 });
        },
        {
          connection: workerConnection,
          prefix,
          concurrency: opts.concurrency ?? 1,
          lockDuration: options.lockDurationMs ?? 30_000,
          stalledInterval: options.stalledIntervalMs ?? 30_000,
          maxStalledCount: 1000,
        },
      );
      worker.on('error', () => {
        // connection hiccups; the worker resumes by itself
      });
      workers.push(worker);
      await worker.waitUntilReady();
    },

    async close() {
      await Promise.all(workers.map((w) => w.close()));
      await Promise.all([...queues.values()].map((q) => q.close()));
      for (const c of [...workerConnections, connection]) await c.quit().catch(() => c.disconnect());
    },
  };
}
