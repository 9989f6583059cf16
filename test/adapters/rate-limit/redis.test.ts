import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { createRedisRateLimiters } from '../../../src/adapters/rate-limit/redis.js';
import { RateLimiterUnavailable } from '../../../src/ports/rate-limiter.js';
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

describe('Redis rate limiter, Redis away', function () {
  this.timeout(15_000);

  it('an attempt is neither allowed nor refused: it fails as the store being unavailable, within seconds', async () => {
    const limiters = createRedisRateLimiters({ redisUrl: 'redis://127.0.0.1:1' });
    try {
      const started = Date.now();
      const err = await limiters.limiter({ name: 'away', points: 3, windowSeconds: 60 }).take('k').then(() => undefined, (e: unknown) => e);
      expect(err).to.be.instanceOf(RateLimiterUnavailable);
      expect(Date.now() - started).to.be.below(5_000);
    } finally {
      await limiters.close();
    }
  });
});
