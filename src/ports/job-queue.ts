/**
 * The job queue port. Adapters: PostgreSQL (pg-boss, the default) and BullMQ (when REDIS_URL is set).
 * Delivery is at-least-once: a handler must be idempotent. Retry schedules are ours: a handler that
 * wants another attempt later enqueues it itself, so both adapters behave alike.
 */
export interface EnqueueOptions {
  /** Deduplication key: a second enqueue with the same jobId while the first exists is a no-op. */
  jobId?: string;
  /** The job runs no earlier than this many milliseconds from now. */
  delayMs?: number;
}

export interface Job<T = unknown> {
  id: string;
  name: string;
  data: T;
  /** 1 on the first run; higher when a failed or lost run is retried by the queue */
  attempt: number;
}

export interface WorkOptions {
  concurrency?: number;
}

export type JobHandler<T = unknown> = (job: Job<T>) => Promise<void>;

export interface JobQueue {
  enqueue<T>(name: string, data: T, options?: EnqueueOptions): Promise<void>;
  work<T>(name: string, handler: JobHandler<T>, options?: WorkOptions): Promise<void>;
  /**
   * Jobs of `name` waiting to run (due or delayed), not those running; throws when the queue's store is
   * unreachable (readiness asks it for that reason too). Optional: a queue without it reports no depth.
   */
  depth?(name: string): Promise<number>;
  /**
   * Rewrites the data of the jobs of `name` not run to completion (waiting, delayed, failed) for which
   * `change` returns new data: an erasure's reach into payloads that carry personal data. Optional: the
   * PostgreSQL queue's jobs are rows its erasure updates in SQL (adapters/db/webhook-delivery-copies.ts).
   */
  redact?(name: string, change: (data: unknown) => unknown | undefined): Promise<void>;
  /** Stops taking new jobs and waits for running handlers. */
  close(): Promise<void>;
}
