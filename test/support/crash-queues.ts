import { randomBytes } from 'node:crypto';
import type { QueueSpec } from '../adapters/queue/queue-spec.js';
import type { TestDatabase } from './db.js';
import { deleteKeys, redisReachable } from './redis.js';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A job queue for tests that kill worker processes: the spec a child process builds it from, and how soon it re-runs a lost job. */
export interface QueueUnderTest {
  name: string;
  spec(database: TestDatabase): QueueSpec;
  available(): Promise<boolean>;
  dispose(spec: QueueSpec): Promise<void>;
}

// Short timings, as in test/adapters/queue: a lost run comes back within seconds.
export const pgBoss: QueueUnderTest = {
  name: 'pg-boss',
  spec: (database) => ({
    adapter: 'pg-boss',
    options: { connectionString: database.url, schema: 'jobs_test', retryDelayMs: 1000, expireAfterMs: 2000, maintenanceIntervalMs: 1000, pollingIntervalMs: 100, poolSize: 3 },
  }),
  available: async () => true,
  dispose: async () => {},
};
export const bullMq: QueueUnderTest = {
  name: 'BullMQ',
  spec: () => ({
    adapter: 'bullmq',
    options: { redisUrl, prefix: `courier-test-${randomBytes(4).toString('hex')}`, retryDelayMs: 1000, lockDurationMs: 1000, stalledIntervalMs: 500 },
  }),
  available: () => redisReachable(redisUrl),
  async dispose(spec) {
    if (spec.adapter !== 'bullmq') return;
    if (spec.options.prefix) await deleteKeys(redisUrl, spec.options.prefix);
  },
};

/** Skips the suite when the queue's server is not reachable (CI has it, and fails instead). */
export async function skipUnlessAvailable(queue: QueueUnderTest, context: Mocha.Context): Promise<void> {
  if (await queue.available()) return;
  if (process.env.CI === 'true') throw new Error(`${queue.name} is not reachable, and CI needs this suite`);
  console.warn(`    skipped: ${queue.name} not reachable`);
  context.skip();
}
