import { createDb } from '../../../src/adapters/db/knex.js';
import { createPostgresRateLimiters } from '../../../src/adapters/rate-limit/postgres.js';
import { createTestDatabase } from '../../support/db.js';
import { rateLimiterContract } from './contract.js';

describe('PostgreSQL rate limiter', function () {
  this.timeout(30_000);
  rateLimiterContract('PostgreSQL', async () => {
    const testDb = await createTestDatabase();
    const pools: ReturnType<typeof createDb>[] = [];
    return {
      // each handle on its own pool, as each API process has
      open() {
        const db = createDb(testDb.url, { pool: 4 });
        pools.push(db);
        return createPostgresRateLimiters(db);
      },
      async cleanup() {
        for (const db of pools) await db.destroy();
        await testDb.drop();
      },
    };
  });
});
