import { randomBytes } from 'node:crypto';
import { deleteKeys, redisReachable } from '../../support/redis.js';
import { jobQueueContract } from './contract.js';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('BullMQ job queue (Redis)', function () {
  before(async function () {
    if (await redisReachable(redisUrl)) return;
    if (process.env.CI === 'true') throw new Error(`Redis is not reachable at ${redisUrl}, and CI needs this suite`);
    console.warn(`    skipped: no Redis reachable at ${redisUrl} (set REDIS_URL; CI=true makes this a failure)`);
    this.skip();
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
