import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { createDb, type Db } from '../../src/adapters/db/knex.js';
import { createPostgresRateLimiters } from '../../src/adapters/rate-limit/postgres.js';
import { createRedisRateLimiters } from '../../src/adapters/rate-limit/redis.js';
import { createProviderRate, type ProviderRate } from '../../src/jobs/provider-rate.js';
import type { RateLimiters } from '../../src/ports/rate-limiter.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { deleteKeys, skipWithoutRedis } from '../support/redis.js';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

type Kind = 'transactional' | 'campaign';

/**
 * Two workers as two processes have them: each its own connections (database pool, Redis client) and its
 * own provider rate, sharing only the store. Each admission is recorded in the order it was given.
 */
function providerRateAcrossWorkers(store: string, openLimiters: (db: Db) => RateLimiters) {
  describe(`providerRatePerSecond across two workers (${store})`, function () {
    this.timeout(60_000);
    let testDb: TestDatabase;
    const pools: Db[] = [];
    const opened: RateLimiters[] = [];
    let accountId: string;
    let workers: ProviderRate[];

    before(async () => {
      testDb = await createTestDatabase();
      // the one column of the accounts read model the provider rate reads
      await testDb.db.schema.createTable('accounts', (t) => {
        t.text('id').primary();
        t.double('provider_rate_per_second');
      });
    });
    beforeEach(async () => {
      accountId = `acct-${randomBytes(4).toString('hex')}`;
      workers = [0, 1].map(() => {
        // as many connections as calls waiting at once, as a worker's pool has
        const db = createDb(testDb.url, { pool: 5 });
        const limiters = openLimiters(db);
        pools.push(db);
        opened.push(limiters);
        return createProviderRate({ db, limiters });
      });
    });
    after(async () => {
      for (const l of opened) await l.close();
      for (const db of pools) await db.destroy();
      await testDb?.drop();
    });

    const withRate = (rate: number) => testDb.db('accounts').insert({ id: accountId, provider_rate_per_second: rate });

    /** Each `takes` entry on its worker, asked at once; the admissions in the order given, with when. */
    function admissions(takes: { worker: 0 | 1; kind: Kind }[], given: { kind: Kind; worker: number; at: number }[] = []) {
      const all = Promise.all(
        takes.map(async ({ worker, kind }) => {
          await workers[worker].take(accountId, kind);
          given.push({ kind, worker, at: Date.now() });
        }),
      );
      return { given, all: all.then(() => given) };
    }

    it('honours the account\'s rate for both workers together: 16 calls at 4 a second take four windows', async () => {
      await withRate(4);
      const given = await admissions(Array.from({ length: 16 }, (_, i) => ({ worker: (i % 2) as 0 | 1, kind: 'transactional' as const }))).all;
      expect(new Set(given.map((g) => g.worker))).to.have.lengthOf(2);
      // Each worker alone would let 4 a second through (16 within two windows, about a second apart).
      // Shared, the 16 need four windows: the last comes at least three window lengths after the first
      // (less a little for the clocks of the store and of this process)...
      expect(given[15].at - given[0].at).to.be.at.least(2_800);
      // ...and no two adjacent windows hold more than the rate allows in each.
      for (let i = 0; i + 8 < given.length; i++) expect(given[i + 8].at - given[i].at).to.be.at.least(900);
    });

    it('serves transactional calls first: a campaign on one worker leaves a window\'s last fifth, and waits behind the other worker\'s transactional calls', async () => {
      await withRate(5);
      const campaign = admissions(Array.from({ length: 12 }, () => ({ worker: 0 as const, kind: 'campaign' as const })));
      while (campaign.given.length === 0) await new Promise((r) => setTimeout(r, 5));
      // the campaign has opened the window; the transactional calls come while it waits for more
      const transactional = await admissions(Array.from({ length: 5 }, () => ({ worker: 1 as const, kind: 'transactional' as const })), campaign.given).all;
      const given = await campaign.all;
      const campaigns = given.filter((g) => g.kind === 'campaign');
      const firstCampaignOfWindowTwo = given.indexOf(campaigns[4]);
      // 4 of the window's 5 calls at most for the campaign: its fifth waits for the next window...
      expect(campaigns[4].at - campaigns[0].at).to.be.at.least(900);
      // ...which the transactional calls refused meanwhile are given before it (they look again first)
      expect(transactional.filter((g) => g.kind === 'transactional').map((g) => given.indexOf(g))).to.satisfy((at: number[]) => at.every((i) => i < firstCampaignOfWindowTwo));
    });
  });
}

providerRateAcrossWorkers('PostgreSQL', (db) => createPostgresRateLimiters(db));

describe('provider rate over Redis', function () {
  const prefix = `courier-test-${randomBytes(4).toString('hex')}`;
  before(function () {
    return skipWithoutRedis(this, redisUrl);
  });
  after(() => deleteKeys(redisUrl, prefix));
  // each worker on its own Redis connection
  providerRateAcrossWorkers('Redis', () => createRedisRateLimiters({ redisUrl, prefix }));
});
