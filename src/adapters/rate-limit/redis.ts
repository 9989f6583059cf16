import { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import type { RateLimiters } from '../../ports/rate-limiter.js';
import { fromFlexible } from './flexible.js';

/** Counters in Redis under `<prefix>:rate:`, on a connection of their own opened at the first use. */
export function createRedisRateLimiters(options: { redisUrl: string; prefix?: string }): RateLimiters {
  // One retry: with Redis away, a sign-in or a refused key is answered 503 within a couple of seconds, not twenty.
  const redis = new Redis(options.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  redis.on('error', () => {
    // ioredis reconnects by itself; a command that fails meanwhile rejects and is answered as an error.
  });
  const prefix = `${options.prefix ?? 'courier'}:rate`;
  return {
    limiter(limit) {
      return fromFlexible(
        new RateLimiterRedis({
          storeClient: redis,
          keyPrefix: `${prefix}:${limit.name}`,
          points: limit.points,
          duration: limit.windowSeconds,
        }),
      );
    },
    async close() {
      if (redis.status === 'wait' || redis.status === 'end') redis.disconnect();
      else await redis.quit().catch(() => redis.disconnect());
    },
  };
}
