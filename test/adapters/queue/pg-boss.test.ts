import { createTestDatabase } from '../../support/db.js';
import { jobQueueContract } from './contract.js';

// Short timings so lost runs come back within seconds: expiry 2 s, maintenance every 1 s, retry 1 s.
jobQueueContract('pg-boss (PostgreSQL)', async () => {
  const database = await createTestDatabase({ migrate: false });
  return {
    spec: {
      adapter: 'pg-boss',
      options: {
        connectionString: database.url,
        schema: 'jobs_test',
        retryDelayMs: 1000,
        expireAfterMs: 2000,
        maintenanceIntervalMs: 1000,
        pollingIntervalMs: 100,
        poolSize: 3,
      },
    },
    retryDelayMs: 1000,
    lostRunRerunWithinMs: 2000 + 1000 + 1000 + 1000,
    dispose: () => database.drop(),
  };
});
