import { Redis } from 'ioredis';

/** Whether a Redis answers at `url` within a second (the BullMQ suites skip without one). */
export async function redisReachable(url: string): Promise<boolean> {
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

/** A suite's `before`: it runs with a Redis at `url`, is skipped without one, and fails without one in CI. */
export async function skipWithoutRedis(context: Mocha.Context, url: string): Promise<void> {
  if (await redisReachable(url)) return;
  if (process.env.CI === 'true') throw new Error(`Redis is not reachable at ${url}, and CI needs this suite`);
  console.warn(`    skipped: no Redis reachable at ${url} (set REDIS_URL; CI=true makes this a failure)`);
  context.skip();
}

/** Removes every key under `prefix:` (a test queue's own namespace). */
export async function deleteKeys(url: string, prefix: string): Promise<void> {
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
