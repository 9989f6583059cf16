import { randomBytes } from 'node:crypto';
import { createRedisRateLimiters } from '../../../src/adapters/rate-limit/redis.js';
import { deleteKeys, skipWithoutRedis } from '../../support/redis.js';
import { rateLimiterContract } from './contract.js';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('Redis rate limiter', function () {
  this.timeout(30_000);
  before(function () {
    return skipWithoutRedis(this, redisUrl);
  });

  rateLimiterContract('Redis', async () => {
    const prefix = `courier-test-${randomBytes(4).toString('hex')}`;
    return {
      open: () => createRedisRateLimiters({ redisUrl, prefix }),
      cleanup: () => deleteKeys(redisUrl, prefix),
    };
  });
});
