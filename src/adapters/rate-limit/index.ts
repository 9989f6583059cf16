import type { Db } from '../db/knex.js';
import type { RateLimiters } from '../../ports/rate-limiter.js';
import { createPostgresRateLimiters } from './postgres.js';
import { createRedisRateLimiters } from './redis.js';

/** Redis when REDIS_URL is set (every process shares it, as they share the job queue there), else PostgreSQL. */
export function createRateLimiters(options: { db: Db; redisUrl?: string; redisPrefix?: string }): RateLimiters {
  return options.redisUrl ? createRedisRateLimiters({ redisUrl: options.redisUrl, prefix: options.redisPrefix }) : createPostgresRateLimiters(options.db);
}
