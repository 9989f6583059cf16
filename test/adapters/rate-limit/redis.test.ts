import { randomBytes } from 'node:crypto';
import { createRedisRateLimiters } from '../../../src/adapters/rate-limit/redis.js';
import { deleteKeys, redisReachable } from '../../support/redis.js';
import { rateLimiterContract } from './contract.js';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('Redis rate limiter', function () {
  this.timeout(30_000);
  before(async function () {
    if (await redisReachable(redisUrl)) return;
    if (process.env.CI === 'true') throw new Error(`Redis is not reachable at ${redisUrl}, and CI needs this suite`);
    console.warn(`    skipped: no Redis reachable at ${redisUrl} (set REDIS_URL; CI=true makes this a failure)`);
    this.skip();
  });

  rateLimiterContract('Redis', async () => {
    const prefix = `courier-test-${randomBytes(4).toString('hex')}`;
    return {
      open: () => createRedisRateLimiters({ redisUrl, prefix }),
      cleanup: () => deleteKeys(redisUrl, prefix),
    };
  });
});
