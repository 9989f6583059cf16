import { RateLimiterPostgres } from 'rate-limiter-flexible';
import type { Db } from '../db/knex.js';
import type { RateLimiters } from '../../ports/rate-limiter.js';
import { fromFlexible } from './flexible.js';

/** The table migration 016 creates (in the columns and order rate-limiter-flexible writes). */
export const RATE_LIMITS_TABLE = 'rate_limits';

/** Counters in the service's PostgreSQL, one row per key and limit, on the service's own pool. */
export function createPostgresRateLimiters(db: Db): RateLimiters {
  return {
    limiter(limit) {
      return fromFlexible(
        new RateLimiterPostgres({
          storeClient: db,
          storeType: 'knex',
          tableName: RATE_LIMITS_TABLE,
          tableCreated: true,
          keyPrefix: limit.name,
          points: limit.points,
          duration: limit.windowSeconds,
        }),
      );
    },
    async close() {},
  };
}
