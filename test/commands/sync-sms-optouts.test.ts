import { expect } from 'chai';
import { createDb, type Db } from '../../src/adapters/db/knex.js';
import { createSnsSmsProvider } from '../../src/adapters/sms/sns.js';
import { createSuppressionCommands } from '../../src/commands/suppressions.js';
import { createSmsOptOutSync, type SmsOptOutSync } from '../../src/commands/sync-sms-optouts.js';
import { createSyncRuns } from '../../src/adapters/db/sync-runs.js';
import { createProjectionWaiter } from '../../src/projections/waiter.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually } from '../support/email-setup.js';
import { FAKE_AWS_CREDENTIALS, startFakeSns, type FakeSns } from '../support/fake-sns.js';
import { setSms } from '../support/sms-setup.js';
import { useFakeAwsCredentials } from '../support/aws-credentials.js';

const numbers = (from: number, n: number) => Array.from({ length: n }, (_, i) => `+1202555${String(from + i).padStart(4, '0')}`);

/**
 * One sync at a time across processes. "Another process" here is a second sync with its own
 * connection pool on the same database (advisory locks belong to database sessions), racing the
 * test app's own forced sync over HTTP.
 */
describe('SMS opt-out sync across processes', function () {
  this.timeout(60_000);
  let app: TestApp;
  let fake: FakeSns;
  let restoreEnv: () => void;
  let otherDb: Db;
  let other: SmsOptOutSync;
  /** a second instance on the same database, as another process would have */
  let slow: SmsOptOutSync;
  let accountId: string;

  const forced = () => app.request('POST', '/api/sms/sync-optouts', { token: app.adminToken });
  const waitingForLock = async () =>
    Number((await app.infra.db.raw("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")).rows[0].n);
  const suppressedCounts = async (phones: string[]) =>
    Promise.all(phones.map(async (p) => (await app.infra.eventStore.readStream(`suppression-${accountId}-${app.infra.privacy.personOf(p)}`)).filter((e) => e.type === 'AddressSuppressed').length));

  before(async () => {
    restoreEnv = useFakeAwsCredentials();
    fake = await startFakeSns({ optedOut: numbers(1000, 250) });
    app = await startTestApp({ SMS_PROVIDER: 'sns', AWS_ENDPOINT_URL_SNS: fake.url });
    await setSms(app, {});
    accountId = (await app.infra.db('accounts').first('id')).id;
    otherDb = createDb(app.config.DATABASE_URL!);
    const waiter = createProjectionWaiter({ db: otherDb });
    const deps = {
      db: otherDb,
      runs: createSyncRuns(otherDb),
      waiter,
      provider: createSnsSmsProvider({ region: 'us-east-1', endpoint: fake.url, credentials: FAKE_AWS_CREDENTIALS, maxAttempts: 1 }),
      suppressions: createSuppressionCommands({
        eventStore: app.infra.eventStore,
        db: otherDb,
        waitFor: (name, position) => (position ? waiter.waitFor(name, position, 30_000) : Promise.resolve()),
        personOf: app.infra.privacy.personOf,
      }),
    };
    other = createSmsOptOutSync(deps);
    slow = createSmsOptOutSync(deps);
  });
  after(async () => {
    await otherDb?.destroy();
    await app?.close();
    await fake?.close();
    restoreEnv?.();
  });

  it('a forced sync racing a running one waits for it and answers its result: one listing, each number suppressed once', async () => {
    const release = fake.hold('ListPhoneNumbersOptedOut');
    const background = other.sync();
    await eventually(async () => fake.calls.ListPhoneNumbersOptedOut ?? 0, (n) => n === 1);
    const racing = [forced(), forced()];
    await eventually(waitingForLock, (n) => n === 2);
    expect(fake.calls.ListPhoneNumbersOptedOut).to.equal(1);
    release();

    const [first, ...rest] = await Promise.all([background, ...racing]);
    expect(first).to.deep.equal({ synced: 250, total: 250 });
    for (const r of rest) {
      expect(r.status).to.equal(200);
      expect(r.body).to.deep.equal({ synced: 250, total: 250 });
    }
    expect(fake.calls.ListPhoneNumbersOptedOut).to.equal(3); // 250 numbers, 100 a page, listed once
    expect(fake.maxInFlight.ListPhoneNumbersOptedOut).to.equal(1);
    expect(new Set(await suppressedCounts(numbers(1000, 250)))).to.deep.equal(new Set([1]));
    const runs = await app.infra.db('sms_optout_sync_runs').select('synced', 'total');
    expect(runs).to.deep.equal([{ synced: 250, total: 250 }]);
  });

  it('when the run it waited for fails, the waiting sync runs one itself', async () => {
    fake.optedOut.push(...numbers(2000, 10));
    const release = fake.hold('ListPhoneNumbersOptedOut');
    fake.failNext('ListPhoneNumbersOptedOut', { status: 500, code: 'InternalError', message: 'boom' });
    const calls = fake.calls.ListPhoneNumbersOptedOut;
    const failing = other.sync().catch((e) => e);
    await eventually(async () => fake.calls.ListPhoneNumbersOptedOut, (n) => n === calls + 1);
    const waiting = forced();
    await eventually(waitingForLock, (n) => n === 1);
    release();
    expect(await failing).to.be.instanceOf(Error).with.property('message').that.includes('boom');
    const res = await waiting;
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ synced: 10, total: 260 });
    expect(await suppressedCounts(numbers(2000, 10))).to.deep.equal(Array(10).fill(1));
  });

  it('syncs one after another each list again', async () => {
    const calls = fake.calls.ListPhoneNumbersOptedOut;
    expect(await other.sync()).to.deep.equal({ synced: 0, total: 260 });
    expect((await forced()).body).to.deep.equal({ synced: 0, total: 260 });
    expect(fake.calls.ListPhoneNumbersOptedOut).to.equal(calls + 6);
  });

  it('another instance gives the same result: new numbers suppressed once, nothing added the second time', async () => {
    fake.optedOut.push(...numbers(3000, 3));
    expect(await slow.sync()).to.deep.equal({ synced: 3, total: 263 });
    expect(await slow.sync()).to.deep.equal({ synced: 0, total: 263 });
    expect(await suppressedCounts(numbers(3000, 3))).to.deep.equal([1, 1, 1]);
    const listed = await app.request('GET', `/api/suppressions?search=${encodeURIComponent(numbers(3000, 1)[0])}`, { token: app.adminToken });
    expect(listed.body.items).to.have.length(1);
  });

  it('once a sync answers, its numbers are on the suppression list (sends are refused)', async () => {
    fake.optedOut.push(...numbers(4000, 40));
    expect(await other.sync()).to.deep.equal({ synced: 40, total: 303 });
    const rows = await app.infra.db('suppressions').where({ account_id: accountId }).whereIn('value', numbers(4000, 40)).select('value', 'source');
    expect(rows).to.have.length(40);
    expect(new Set(rows.map((r) => r.source))).to.deep.equal(new Set(['sms_optout']));
  });
});
