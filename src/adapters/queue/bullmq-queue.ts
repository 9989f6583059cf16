import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { EnqueueOptions, JobHandler, JobQueue, WorkOptions } from '../../ports/job-queue.js';
import { createGroupCommit, type GroupCommit } from '../../group-commit.js';

export interface BullMqQueueOptions {
  redisUrl: string;
  /** key prefix, so several deployments (or test runs) can share one Redis (default `courier`) */
  prefix?: string;
  /**
   * A handler that throws runs again after this fixed delay (default 1 s), for up to `maxAttempts`
   * runs in all (default 100,000: days of retrying, so an outage does not turn into lost jobs;
   * business retry schedules are the handlers' own).
   */
  retryDelayMs?: number;
  maxAttempts?: number;
  /**
   * A running job holds a lock that its worker renews every lockDurationMs / 2; a worker that dies
   * stops renewing, and the stalled-job check (every stalledIntervalMs, in any live worker) puts
   * the job back once the lock has lapsed. Defaults are BullMQ's own, 30 s and 30 s: a job whose
   * worker died runs again within about a minute. Unlike pg-boss's expiry, a slow but live handler
   * keeps its lock and is never run twice for slowness.
   */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  /** handler failures and background errors; the queue itself retries, this is for logging */
  onError?: (err: unknown) => void;
}

// BullMQ refuses custom ids that contain ':' (its key separator) or that read as integers. The
// prefix keeps every encoded id non-numeric, and encodeURIComponent is injective, so distinct
// jobIds stay distinct.
const ID_PREFIX = 'j_';
export const encodeJobId = (id: string): string => ID_PREFIX + encodeURIComponent(id);
const decodeJobId = (id: string | undefined): string =>
  id?.startsWith(ID_PREFIX) ? decodeURIComponent(id.slice(ID_PREFIX.length)) : (id ?? '');

/**
 * The Redis job queue (BullMQ), used when REDIS_URL is set. A jobId is BullMQ's own job id, so a
 * second enqueue is a no-op while the first job exists (waiting, delayed, running or failed);
 * completed jobs are removed at once, after which the id may be used again.
 */
export function createBullMqQueue(options: BullMqQueueOptions): JobQueue {
  const onError = options.onError ?? (() => {});
  // BullMQ needs maxRetriesPerRequest: null (commands wait out a reconnect instead of failing);
  // Queues share this connection and each Worker makes its own duplicates, closed with it.
  const connection = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
  connection.on('error', onError);
  const prefix = options.prefix ?? 'courier';
  const queues = new Map<string, Queue>();
  const workers: Worker[] = [];
  let closed = false;

  const queueFor = (name: string) => {
    let queue = queues.get(name);
    if (!queue) {
      queue = new Queue(name, { connection, prefix });
      queue.on('error', onError);
      queues.set(name, queue);
    }
    return queue;
  };

  // Jobs enqueued together (a process manager's batch, concurrent handlers' next steps) go to Redis in
  // one round trip per queue.
  const adds = new Map<string, GroupCommit<{ data: unknown; opts: EnqueueOptions }, void>>();
  const addsFor = (name: string) => {
    let batch = adds.get(name);
    if (!batch) {
      batch = createGroupCommit(async (jobs) => {
        await queueFor(name).addBulk(jobs.map(({ data, opts }) => ({ name, data, opts: jobOptions(opts) })));
      });
      adds.set(name, batch);
    }
    return batch;
  };
  const jobOptions = (opts: EnqueueOptions) => {
    const delayMs = Math.ceil(opts.delayMs ?? 0);
    return {
      ...(opts.jobId !== undefined ? { jobId: encodeJobId(opts.jobId) } : {}),
      ...(delayMs > 0 ? { delay: delayMs } : {}),
      attempts: options.maxAttempts ?? 100_000,
      backoff: { type: 'fixed' as const, delay: options.retryDelayMs ?? 1000 },
      removeOnComplete: true,
      removeOnFail: { age: 14 * 24 * 3600 },
    };
  };

  return {
    // Handlers still running during close() may enqueue (their own retry schedule), so enqueue is
    // not refused while closing.
    enqueue<T>(name: string, data: T, opts: EnqueueOptions = {}) {
      return addsFor(name).add({ data, opts });
    },

    async redact(name: string, change: (data: unknown) => unknown | undefined) {
      const queue = queueFor(name);
      // completed jobs are removed on completion (removeOnComplete): the rest is what can hold data
      const PAGE = 500;
      for (let start = 0; ; start += PAGE) {
        const jobs = await queue.getJobs(['waiting', 'delayed', 'prioritized', 'waiting-children', 'failed'], start, start + PAGE - 1, true);
        for (const job of jobs) {
          const next = job && change(job.data);
          if (next !== undefined) await job.updateData(next);
        }
        if (jobs.length < PAGE) break;
      }
    },

    async depth(name: string) {
      const counts = await queueFor(name).getJobCounts('waiting', 'delayed', 'prioritized');
      return Object.values(counts).reduce((sum, n) => sum + n, 0);
    },

    async work<T>(name: string, handler: JobHandler<T>, opts: WorkOptions = {}) {
      if (closed) throw new Error('job queue is closed');
      const worker = new Worker(
        name,
        async (job) => {
          // attemptsStarted also counts runs lost with their worker, which attemptsMade does not.
          await handler({ id: decodeJobId(job.id), name: job.name, data: job.data as T, attempt: job.attemptsStarted });
        },
        {
          connection,
          prefix,
          concurrency: Math.max(1, opts.concurrency ?? 1),
          lockDuration: options.lockDurationMs ?? 30_000,
          stalledInterval: options.stalledIntervalMs ?? 30_000,
          // A stalled job goes back to the queue however often it happens: never failed for it.
          maxStalledCount: 1_000_000,
        },
      );
      worker.on('error', onError);
      worker.on('failed', (_job, err) => onError(err));
      workers.push(worker);
      await worker.waitUntilReady();
    },

    async close() {
      if (closed) return;
      closed = true;
      // Worker.close() stops fetching and waits for the running handlers.
      await Promise.all(workers.map((w) => w.close()));
      await Promise.all([...adds.values()].map((a) => a.drain()));
      await Promise.all([...queues.values()].map((q) => q.close()));
      await connection.quit().catch(() => connection.disconnect());
    },
  };
}
