import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { createPostgresRateLimiters } from '../../src/adapters/rate-limit/postgres.js';
import { createRedisRateLimiters } from '../../src/adapters/rate-limit/redis.js';
import { createProviderRate } from '../../src/jobs/provider-rate.js';
import type { RateLimiters } from '../../src/ports/rate-limiter.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { deleteKeys, skipWithoutRedis } from '../support/redis.js';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** setTimeout's longest delay */
const MAX_TIMER_MS = 2_147_483_647;

/** Any positive rate, however slow or fast, becomes a window the store takes: sends go on, none overflows. */
function extremeRates(store: string, openLimiters: (testDb: TestDatabase) => RateLimiters) {
  describe(`providerRatePerSecond far below and above one a second (${store})`, function () {
    this.timeout(30_000);
    let testDb: TestDatabase;
    let limiters: RateLimiters;
    before(async () => {
      testDb = await createTestDatabase();
      // the one column of the accounts read model the provider rate reads
      await testDb.db.schema.createTable('accounts', (t) => {
        t.text('id').primary();
        t.double('provider_rate_per_second');
      });
      limiters = openLimiters(testDb);
    });
    after(async () => {
      await limiters?.close();
      await testDb?.drop();
    });

    /** A worker on an account of this rate whose waits are recorded, not slept: the first ends the take. */
    async function worker(rate: number) {
      const accountId = `acct-${randomBytes(4).toString('hex')}`;
      await testDb.db('accounts').insert({ id: accountId, provider_rate_per_second: rate });
      const waits: number[] = [];
      const sleep = async (ms: number) => {
        waits.push(ms);
        throw new Error('waits');
      };
      // a wait slept whole, to see the window's length in it
      const provider = createProviderRate({ db: testDb.db, limiters, sleep, waitStepMs: Infinity });
      const take = (kind: 'transactional' | 'campaign') => provider.take(accountId, kind);
      /** a take that has to wait: the error its recorded sleep ends it with */
      const refused = (kind: 'transactional' | 'campaign') => take(kind).then(() => expect.fail('admitted'), (err: Error) => err.message);
      return { take, refused, waits };
    }

    it('a wait looks at the rate again a step at a time: a limit lifted or changed meanwhile counts within a second or two', async () => {
      for (const after of [null, 1000]) {
        const accountId = `acct-${randomBytes(4).toString('hex')}`;
        await testDb.db('accounts').insert({ id: accountId, provider_rate_per_second: 0.001 });
        const provider = createProviderRate({ db: testDb.db, limiters, waitStepMs: 100 });
        await provider.take(accountId, 'transactional');
        const started = Date.now();
        let done = false;
        const waiting = provider.take(accountId, 'transactional').then(() => (done = true));
        await new Promise((r) => setTimeout(r, 300));
        expect(done, 'one call in 1,000 s: the second waits').to.equal(false);
        await testDb.db('accounts').where({ id: accountId }).update({ provider_rate_per_second: after });
        await waiting;
        expect(Date.now() - started, String(after)).to.be.below(3_000);
      }
    });

    it('0.005 a second is one call, then a wait of the 200 seconds its window has left', async () => {
      const w = await worker(0.005);
      await w.take('transactional');
      expect(await w.refused('transactional')).to.equal('waits');
      expect(w.waits).to.have.lengthOf(1);
      expect(w.waits[0]).to.be.within(195_000, 200_020);
    });

    it('a rate slower than one call in the longest window (136 years) is one call in it; the wait is slept in timer-sized steps', async () => {
      for (const rate of [1e-12, 1e-300, Number.MIN_VALUE]) {
        const w = await worker(rate);
        await w.take('campaign');
        expect(await w.refused('transactional')).to.equal('waits');
        expect(w.waits, String(rate)).to.deep.equal([MAX_TIMER_MS]);
      }
    });

    it('a huge rate (past the counter\'s 32 bits, up to the largest number) lets every call through at once', async () => {
      for (const rate of [5e9, 1e300, Number.MAX_VALUE]) {
        const w = await worker(rate);
        await Promise.all(Array.from({ length: 50 }, (_, i) => w.take(i % 2 ? 'campaign' : 'transactional')));
        expect(w.waits, String(rate)).to.deep.equal([]);
      }
    });
  });
}

extremeRates('PostgreSQL', (testDb) => createPostgresRateLimiters(testDb.db));

describe('provider rate extremes over Redis', function () {
  const prefix = `courier-test-${randomBytes(4).toString('hex')}`;
  before(function () {
    return skipWithoutRedis(this, redisUrl);
  });
  after(() => deleteKeys(redisUrl, prefix));
  extremeRates('Redis', () => createRedisRateLimiters({ redisUrl, prefix }));
});
