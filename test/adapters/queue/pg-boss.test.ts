import { expect } from 'chai';
import { createPgBossQueue, DEFAULT_EXPIRE_AFTER_MS } from '../../../src/adapters/queue/pg-boss-queue.js';
import type { JobQueue } from '../../../src/ports/job-queue.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { indexEntriesRead } from '../../support/index-reads.js';
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

/** A queue with the production defaults on a database of its own, closed and dropped after `body`. */
async function withDefaultQueue(schema: string, body: (queue: JobQueue, database: TestDatabase) => Promise<void>) {
  const database = await createTestDatabase({ migrate: false });
  const queue = createPgBossQueue({ connectionString: database.url, schema });
  try {
    await body(queue, database);
  } finally {
    await queue.close();
    await database.drop();
  }
}

describe('pg-boss queue: fetching from a backlog', function () {
  this.timeout(60_000);

  it('takes the next jobs by walking an index in fetch order, not by sorting every waiting job', () =>
    withDefaultQueue('jobs_fetch', async (queue, database) => {
      await Promise.all(Array.from({ length: 3000 }, (_, i) => queue.enqueue('backlog', { n: i }, { jobId: `b${i}` })));
      await database.db.raw('ANALYZE jobs_fetch.job');
      // pg-boss 10's own fetch statement (plans.js fetchNextJob), as EXPLAIN sees it
      const { rows } = await database.db.raw(`EXPLAIN SELECT id FROM jobs_fetch.job WHERE name = 'backlog' AND state < 'active' AND start_after < now()
        ORDER BY priority desc, created_on, id LIMIT 4 FOR UPDATE SKIP LOCKED`);
      const plan = rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
      expect(plan).to.match(/Index Scan/);
      expect(plan).not.to.match(/Sort/);
    }));
});

describe('pg-boss queue: a backlog that grew after the statistics were taken', function () {
  this.timeout(60_000);

  it('fetches and completes by key, never reading the whole backlog per statement', async () => {
    const database = await createTestDatabase({ migrate: false });
    const options = { connectionString: database.url, schema: 'jobs_stale' };
    const indexEntries = () => indexEntriesRead(database.db, `schemaname = 'jobs_stale'`);
    const total = 3000;
    try {
      // Statistics of a near-empty queue, as on a young partition while a burst arrives: the planner
      // expects a dozen ready jobs.
      const producer = createPgBossQueue(options);
      await producer.enqueue('burst', { n: -1 }, { jobId: 'first' });
      await database.db.raw('ANALYZE jobs_stale.job');
      await Promise.all(Array.from({ length: total }, (_, i) => producer.enqueue('burst', { n: i }, { jobId: `j${i}` })));
      await producer.close();
      const before = await indexEntries();

      const consumer = createPgBossQueue(options);
      let done = 0;
      await new Promise<void>((resolve) => {
        void consumer.work('burst', async () => {
          if (++done === total + 1) resolve();
        }, { concurrency: 32 });
      });
      await consumer.close();
      const perJob = ((await indexEntries()) - before) / total;
      // Fetching by walking the fetch-order index and completing by primary key read a few index
      // entries per job; reading the ready backlog per fetch, or the queue per completion, hundreds.
      expect(perJob).to.be.below(10);
    } finally {
      await database.drop();
    }
  });
});

describe('pg-boss queue: production timings', function () {
  this.timeout(60_000);

  // A job fetched by a worker that died runs again once it expires (then maintenance finds it, every
  // 30 s): about a minute in all, as BullMQ's stalled-job check takes, where 5 min had been the default.
  it('a job is taken for lost 30 s after its run began', () =>
    withDefaultQueue('jobs_defaults', async (queue, database) => {
      await queue.enqueue('defaults', { n: 1 }, { jobId: 'one' });
      const { rows } = await database.db.raw(`SELECT extract(epoch FROM expire_in) AS seconds FROM jobs_defaults.job WHERE name = 'defaults'`);
      expect(rows.map((r: { seconds: string }) => Number(r.seconds))).to.deep.equal([DEFAULT_EXPIRE_AFTER_MS / 1000]);
      expect(DEFAULT_EXPIRE_AFTER_MS).to.equal(30_000);
    }));
});
