import { randomBytes } from 'node:crypto';
import { deleteKeys, redisReachable, skipWithoutRedis } from '../../support/redis.js';
import { expect } from 'chai';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { JobQueue } from '../../../src/ports/job-queue.js';
import { withoutBodyOf } from '../../../src/domain/webhooks/delivery.js';
import { jobQueueContract } from './contract.js';
import { createQueueFromSpec } from './queue-spec.js';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('BullMQ job queue (Redis)', function () {
  before(function () {
    return skipWithoutRedis(this, redisUrl);
  });

  // Short timings so lost runs come back within seconds: lock 1 s, stalled check every 0.5 s, retry 1 s.
  jobQueueContract('BullMQ', async () => {
    const prefix = `courier-test-${randomBytes(4).toString('hex')}`;
    return {
      spec: {
        adapter: 'bullmq',
        options: { redisUrl, prefix, retryDelayMs: 1000, lockDurationMs: 1000, stalledIntervalMs: 500 },
      },
      retryDelayMs: 1000,
      lostRunRerunWithinMs: 1000 + 2 * 500 + 1000,
      dispose: () => deleteKeys(redisUrl, prefix),
    };
  });
});

describe('BullMQ job queue: redact (an erasure reaching payloads in Redis)', function () {
  this.timeout(30_000);
  const prefix = `courier-test-${randomBytes(4).toString('hex')}`;
  let queue: JobQueue;
  before(async function () {
    if (!(await redisReachable(redisUrl))) this.skip();
    queue = createQueueFromSpec({ adapter: 'bullmq', options: { redisUrl, prefix } });
  });
  after(async () => {
    await queue?.close();
    await deleteKeys(redisUrl, prefix);
  });

  it("nulls the body of a waiting delivery about the erased person, and leaves another person's", async () => {
    const name = `t_${randomBytes(5).toString('hex')}`;
    const job = (person: string) => ({ deliveryId: person, series: 1, schedule: { orderingKey: `sub1:${person}`, body: `{"email":"${person}@example.org"}` } });
    await queue.enqueue(name, job('erased'), { jobId: 'a', delayMs: 60_000 });
    await queue.enqueue(name, job('kept'), { jobId: 'b', delayMs: 60_000 });
    await queue.redact!(name, (data) => withoutBodyOf(data, ['erased']));
    const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
    const reader = new Queue(name, { connection, prefix });
    try {
      const jobs = await reader.getJobs(['delayed']);
      const bodies = Object.fromEntries(jobs.map((j) => [j.data.deliveryId, j.data.schedule.body]));
      expect(bodies).to.deep.equal({ erased: null, kept: '{"email":"kept@example.org"}' });
    } finally {
      await reader.close();
      connection.disconnect();
    }
  });
});
