import type { JobQueue } from '../../ports/job-queue.js';
import { createBullMqQueue } from './bullmq-queue.js';
import { createPgBossQueue } from './pg-boss-queue.js';

export interface JobQueueOptions {
  databaseUrl: string;
  redisUrl?: string;
  /** BullMQ's key prefix */
  redisPrefix?: string;
  /** handler failures and background errors (the queue retries by itself; this is for logging) */
  onError?: (err: unknown) => void;
}

/** BullMQ when REDIS_URL is set, else pg-boss in the service's PostgreSQL; production timings. */
export function createJobQueue(options: JobQueueOptions): JobQueue {
  const { databaseUrl, redisUrl, onError } = options;
  return redisUrl ? createBullMqQueue({ redisUrl, prefix: options.redisPrefix, onError }) : createPgBossQueue({ connectionString: databaseUrl, onError });
}
