import { createBullMqQueue, type BullMqQueueOptions } from '../../../src/adapters/queue/bullmq-queue.js';
import { createPgBossQueue, type PgBossQueueOptions } from '../../../src/adapters/queue/pg-boss-queue.js';
import type { JobQueue } from '../../../src/ports/job-queue.js';

/**
 * Which adapter, with which (JSON-serialisable) options: the test process and the child worker
 * process build the same queue from it.
 */
export type QueueSpec =
  | { adapter: 'pg-boss'; options: PgBossQueueOptions }
  | { adapter: 'bullmq'; options: BullMqQueueOptions };

export function createQueueFromSpec(spec: QueueSpec, extra: { onError?: (err: unknown) => void } = {}): JobQueue {
  return spec.adapter === 'pg-boss'
    ? createPgBossQueue({ ...spec.options, ...extra })
    : createBullMqQueue({ ...spec.options, ...extra });
}
