import type { JobQueue } from '../../ports/job-queue.js';
import { createBullMqQueue } from './bullmq-queue.js';
import { createPgBossQueue } from './pg-boss-queue.js';

/** BullMQ when REDIS_URL is set, else pg-boss in the service's PostgreSQL. */
export function createJobQueue(options: { databaseUrl: string; redisUrl?: string }): JobQueue {
  return options.redisUrl ? createBullMqQueue({ redisUrl: options.redisUrl }) : createPgBossQueue({ connectionString: options.databaseUrl });
}
