import { expect } from 'chai';
import PgBoss from 'pg-boss';
import { startPgBossDispatcher, type PgBossDispatcher } from '../../../src/adapters/queue/pg-boss-dispatcher.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { waitFor } from './wait.js';

/**
 * A job's outcome that pg-boss could not record at once (its connection dropped, as it does when the
 * failure that ended the handler was the database's own) is recorded a moment later, instead of the
 * job staying active until it expires (30 s here, as in production), with nothing able to queue it
 * again meanwhile: its id is taken.
 */
describe('pg-boss dispatcher: recording a job\'s outcome while the database drops connections', function () {
  this.timeout(30_000);
  let database: TestDatabase;
  let boss: PgBoss;
  let dispatcher: PgBossDispatcher | undefined;

  beforeEach(async () => {
    database = await createTestDatabase({ migrate: false });
    boss = new PgBoss({ connectionString: database.url, schema: 'dispatch_test', max: 3, supervise: false, schedule: false });
    await boss.start();
    await boss.createQueue('jobs', { name: 'jobs', policy: 'standard' });
  });
  afterEach(async () => {
    await dispatcher?.stop();
    dispatcher = undefined;
    await boss.stop({ graceful: false, wait: true });
    await database.drop();
  });

  /** `boss[method]` throws the first time it is called, as a query on a dropped connection does */
  const droppedOnce = (method: 'fail' | 'complete') => {
    const real = boss[method].bind(boss) as (...args: unknown[]) => Promise<unknown>;
    let calls = 0;
    (boss as unknown as Record<string, unknown>)[method] = (...args: unknown[]) =>
      ++calls === 1 ? Promise.reject(new Error('Connection terminated unexpectedly')) : real(...args);
    return () => calls;
  };
  const completed = async (id: string) => {
    for (let i = 0; i < 50; i++) {
      if ((await boss.getJobById('jobs', id))?.state === 'completed') return true;
      await new Promise((r) => setTimeout(r, 100));
    }
    return false;
  };
  const dispatch = (handler: () => Promise<void>) =>
    (dispatcher = startPgBossDispatcher({ boss, name: 'jobs', onBacklog: () => {}, handler, concurrency: 2, pollingIntervalMs: 100, onError: () => {} }));

  it('a failure is recorded once the connection is back, and the job runs again after the retry delay, not at its expiry', async () => {
    const failCalls = droppedOnce('fail');
    const id = (await boss.send('jobs', {}, { retryLimit: 5, retryDelay: 1, expireInSeconds: 30 }))!;
    let runs = 0;
    dispatch(async () => {
      if (++runs === 1) throw new Error('the database went away');
    });
    await waitFor('the second run', () => runs === 2, 10_000);
    expect(failCalls()).to.equal(2);
    expect(await completed(id)).to.equal(true);
  });

  it('a completion is recorded once the connection is back: the job is not run again', async () => {
    const completeCalls = droppedOnce('complete');
    const id = (await boss.send('jobs', {}, { retryLimit: 5, retryDelay: 1, expireInSeconds: 30 }))!;
    let runs = 0;
    dispatch(async () => {
      runs++;
    });
    await waitFor('the completion recorded', () => completeCalls() === 2, 10_000);
    expect(await completed(id)).to.equal(true);
    expect(runs).to.equal(1);
  });
});
