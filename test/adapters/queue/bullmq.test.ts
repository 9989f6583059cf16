import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { jobQueueContract } from './contract.js';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

async function redisReachable(url: string): Promise<boolean> {
  const probe = new Redis(url, { lazyConnect: true, connectTimeout: 1000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => {});
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

async function deleteKeys(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

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
