import { redisReachable } from '../support/redis.js';
import { scheduledSendSuite } from '../support/scheduled-send-suite.js';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

// The same scheduled sends with the provider call as a BullMQ delayed job (REDIS_URL switches the queue).
scheduledSendSuite(
  'scheduled sends (sendAt) and cancel, on BullMQ',
  async () => {
    if (await redisReachable(redisUrl)) return { REDIS_URL: redisUrl };
    if (process.env.CI === 'true') throw new Error(`Redis is not reachable at ${redisUrl}, and CI needs this suite`);
    console.warn(`    skipped: no Redis reachable at ${redisUrl} (set REDIS_URL; CI=true makes this a failure)`);
    return null;
  },
  { onlyDue: true },
);
