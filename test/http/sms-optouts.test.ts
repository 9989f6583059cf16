import { expect } from 'chai';
import { startLocalReceiver, type LocalReceiver } from '../adapters/webhooks/local-receiver.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually } from '../support/email-setup.js';
import { startFakeSns, type FakeSns } from '../support/fake-sns.js';
import { readyToSendSms, setSms } from '../support/sms-setup.js';
import { useFakeAwsCredentials } from '../support/aws-credentials.js';

const numbers = (from: number, n: number) => Array.from({ length: n }, (_, i) => `+1415555${String(from + i).padStart(4, '0')}`);

/** AddressSuppressed events per number of one account, straight from the event store. */
async function suppressionEvents(app: TestApp, accountId: string, phones: string[]) {
  const counts: Record<string, number> = {};
  for (const p of phones) {
    const events = await app.infra.eventStore.readStream(`suppression-${accountId}-${app.infra.privacy.personOf(p)}`);
    counts[p] = events.filter((e) => e.type === 'AddressSuppressed').length;
  }
  return counts;
}

describe('SMS opt-out sync: POST /api/sms/sync-optouts', function () {
  this.timeout(60_000);
  let app: TestApp;
  let fake: FakeSns;
  let receiver: LocalReceiver;
  let restoreEnv: () => void;
  let accountId: string;
  let key: string;
  const initial = numbers(100, 5);
  const sync = (token = app.adminToken) => app.request('POST', '/api/sms/sync-optouts', { token });

  before(async () => {
    restoreEnv = useFakeAwsCredentials();
    // 2 a page, so 5 numbers take 3 pages (real SNS pages by 100)
    fake = await startFakeSns({ optedOut: initial, pageSize: 2 });
    receiver = await startLocalReceiver({ '/hook': (_req, res) => res.writeHead(200).end('ok') });
    app = await startTestApp({ SMS_PROVIDER: 'sns', AWS_ENDPOINT_URL_SNS: fake.url });
    ({ key } = await readyToSendSms(app));
    accountId = (await app.infra.db('accounts').first('id')).id;
    const hook = await app.request('POST', '/api/webhooks', { token: app.adminToken, body: { url: `${receiver.url}/hook`, events: ['contact.suppressed'] } });
    expect(hook.status).to.equal(201);
  });
  after(async () => {
    await app?.close();
    await fake?.close();
    await receiver?.close();
    restoreEnv?.();
  });

  it('pages through ListPhoneNumbersOptedOut and suppresses every number (source sms_optout, webhook contact.suppressed)', async () => {
    const res = await sync();
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ synced: 5, total: 5 });
    expect(fake.calls.ListPhoneNumbersOptedOut).to.equal(3);

    const list = await app.request('GET', '/api/suppressions?limit=100', { token: app.adminToken });
    const phones = list.body.items.filter((i: { phone?: string }) => i.phone);
    expect(phones.map((i: { phone: string }) => i.phone).sort()).to.deep.equal(initial);
    for (const item of phones) expect(item).to.include({ reason: 'sms_optout', source: 'sms_optout' });

    const hooks = await eventually(
      async () => receiver.requests.map((r) => JSON.parse(r.body)),
      (bodies) => bodies.length >= 5,
    );
    expect(hooks.map((b) => b.event)).to.deep.equal(Array(5).fill('contact.suppressed'));
    expect(hooks.map((b) => b.data.source)).to.deep.equal(Array(5).fill('sms_optout'));
    // a phone suppression has no email; the number travels in data.phone (see webhook-fanout.ts)
    expect(hooks.map((b) => b.data.phone).sort()).to.deep.equal(initial);
  });

  it('a number suppressed once is not suppressed twice: a second sync adds nothing', async () => {
    const res = await sync();
    expect(res.body).to.deep.equal({ synced: 0, total: 5 });
    expect(Object.values(await suppressionEvents(app, accountId, initial))).to.deep.equal([1, 1, 1, 1, 1]);
  });

  it('new numbers on a later page are added; an entry that is no valid number is skipped, not fatal', async () => {
    fake.optedOut.push('+14155550199', 'garbage', '+15555550100');
    const res = await sync();
    expect(res.body).to.deep.equal({ synced: 1, total: 6 });
    expect(await suppressionEvents(app, accountId, ['+14155550199'])).to.deep.equal({ '+14155550199': 1 });
  });

  it('once opted out, sends to the number are refused with 400', async () => {
    const res = await app.request('POST', '/api/send/sms', { apiKey: key, body: { to: initial[0], body: 'hi' } });
    expect(res.status).to.equal(400);
    expect(res.body.message).to.equal(`${initial[0]} has opted out of SMS`);
  });

  it('a lifted suppression comes back while the number stays opted out at the provider', async () => {
    const lift = await app.request('DELETE', `/api/suppressions/${encodeURIComponent(initial[1])}`, { token: app.adminToken });
    expect(lift.status).to.equal(200);
    expect((await sync()).body).to.deep.equal({ synced: 1, total: 6 });
    const after = await app.request('POST', '/api/send/sms', { apiKey: key, body: { to: initial[1], body: 'hi' } });
    expect(after.status).to.equal(400);
  });

  it('covers every SMS-enabled account, and an account that enables SMS later on its next sync', async () => {
    const signup = await app.request('POST', '/api/auth/signup', { body: { accountName: 'Later', email: 'owner@later.example', password: 'later-password' } });
    const token = signup.body.token;
    const other = signup.body.accountId;
    expect((await sync(token)).body).to.deep.equal({ synced: 0, total: 6 });
    await setSms(app, {}, token);
    expect((await sync(token)).body).to.deep.equal({ synced: 6, total: 6 });
    expect(Object.values(await suppressionEvents(app, other, [...initial, '+14155550199']))).to.deep.equal([1, 1, 1, 1, 1, 1]);
    // a number opted out since is added to both accounts; each admin is told of their own account's only
    fake.optedOut.push('+14155550177');
    expect((await sync(token)).body).to.deep.equal({ synced: 1, total: 7 });
    fake.optedOut.push('+14155550178');
    expect((await sync()).body).to.deep.equal({ synced: 1, total: 8 });
  });

  it('with SNS, a simulated opt-out is refused: opt-outs are the recipients\' own', async () => {
    const res = await app.request('POST', '/api/sandbox/sms/opt-outs', { token: app.adminToken, body: { phone: '+14155550999' } });
    expect(res.status).to.equal(409);
    expect(res.body.message).to.match(/^SMS goes through SNS here/);
  });

  it('needs a dashboard session: 401 without one, an API key is refused', async () => {
    const none = await app.request('POST', '/api/sms/sync-optouts');
    expect(none.status).to.equal(401);
    const withKey = await app.request('POST', '/api/sms/sync-optouts', { apiKey: key });
    expect(withKey.status).to.be.oneOf([401, 403]);
  });

  it('a provider error answers an error, not a result, and the next sync works', async () => {
    fake.failNext('ListPhoneNumbersOptedOut', { status: 403, code: 'AuthorizationError', message: 'not authorized to ListPhoneNumbersOptedOut' });
    const res = await sync();
    expect(res.status).to.equal(500);
    expect(res.body).to.deep.equal({
      message: 'Provider error: AuthorizationErrorException: not authorized to ListPhoneNumbersOptedOut',
      error: 'Internal Server Error',
      statusCode: 500,
    });
    expect((await sync()).status).to.equal(200);
  });
});

describe('SMS opt-out sync in the background (SMS_OPTOUT_SYNC_INTERVAL_MS)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let fake: FakeSns;
  let restoreEnv: () => void;

  before(async () => {
    restoreEnv = useFakeAwsCredentials();
    // slow answers, so a forced sync and a background one would overlap if nothing kept them apart
    fake = await startFakeSns({ optedOut: numbers(200, 7), pageSize: 2, latencyMs: 40 });
    app = await startTestApp({ SMS_PROVIDER: 'sns', AWS_ENDPOINT_URL_SNS: fake.url, SMS_OPTOUT_SYNC_INTERVAL_MS: '150' });
    await setSms(app, {});
  });
  after(async () => {
    await app?.close();
    await fake?.close();
    restoreEnv?.();
  });

  it('suppresses newly opted-out numbers without being asked', async () => {
    fake.optedOut.push('+14155550299');
    const list = await eventually(
      () => app.request('GET', '/api/suppressions?limit=100', { token: app.adminToken }),
      (r) => r.body.items.filter((i: { phone?: string }) => i.phone).length === 8,
    );
    expect(list.body.items.map((i: { phone?: string }) => i.phone).sort()).to.deep.equal([...numbers(200, 7), '+14155550299']);
    expect(fake.calls.ListPhoneNumbersOptedOut).to.be.at.least(4);
  });

  it('forced syncs racing the background one never run at the same time, and suppress each number once', async () => {
    const accountId = (await app.infra.db('accounts').first('id')).id;
    fake.optedOut.push(...numbers(300, 5));
    fake.maxInFlight.ListPhoneNumbersOptedOut = 0;
    const forced = await Promise.all(Array.from({ length: 4 }, () => app.request('POST', '/api/sms/sync-optouts', { token: app.adminToken })));
    for (const r of forced) expect(r.status).to.equal(200);
    // a forced call that found a run in progress answers that run's result, which may predate the push
    for (const r of forced) expect(r.body.total).to.be.oneOf([8, 13]);
    const all = [...numbers(200, 7), '+14155550299', ...numbers(300, 5)];
    const counts = await eventually(
      () => suppressionEvents(app, accountId, all),
      (c) => Object.values(c).every((n) => n > 0),
    );
    // let a few more background runs race as well
    const runs = (await app.infra.db('sms_optout_sync_runs').count({ n: '*' }))[0].n;
    await eventually(
      async () => Number((await app.infra.db('sms_optout_sync_runs').count({ n: '*' }))[0].n),
      (n) => n >= Number(runs) + 3,
    );
    expect(Object.values(counts)).to.deep.equal(Array(13).fill(1));
    expect(Object.values(await suppressionEvents(app, accountId, all))).to.deep.equal(Array(13).fill(1));
    expect(fake.maxInFlight.ListPhoneNumbersOptedOut).to.equal(1);
  });
});

describe('SMS opt-out sync on a server where no account has SMS enabled', function () {
  this.timeout(60_000);
  let app: TestApp;
  let fake: FakeSns;
  let restoreEnv: () => void;

  before(async () => {
    restoreEnv = useFakeAwsCredentials();
    fake = await startFakeSns({ optedOut: numbers(400, 3) });
    app = await startTestApp({ SMS_PROVIDER: 'sns', AWS_ENDPOINT_URL_SNS: fake.url });
  });
  after(async () => {
    await app?.close();
    await fake?.close();
    restoreEnv?.();
  });

  it('answers {synced: 0, total: 0} without asking the provider (no AWS needed until SMS is enabled)', async () => {
    const res = await app.request('POST', '/api/sms/sync-optouts', { token: app.adminToken });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ synced: 0, total: 0 });
    expect(fake.calls.ListPhoneNumbersOptedOut ?? 0).to.equal(0);
    await setSms(app, {});
    expect((await app.request('POST', '/api/sms/sync-optouts', { token: app.adminToken })).body).to.deep.equal({ synced: 3, total: 3 });
  });
});

describe('SMS opt-outs simulated with the sandbox SMS provider: POST /api/sandbox/sms/opt-outs', function () {
  this.timeout(60_000);
  let app: TestApp;
  let receiver: LocalReceiver;

  before(async () => {
    receiver = await startLocalReceiver({ '/hook': (_req, res) => res.writeHead(200).end('ok') });
    app = await startTestApp({ SMS_PROVIDER: 'sandbox' });
    await setSms(app, {});
    await app.request('POST', '/api/webhooks', { token: app.adminToken, body: { url: `${receiver.url}/hook`, events: ['contact.suppressed'] } });
  });
  after(async () => {
    await app?.close();
    await receiver?.close();
  });

  it('a number opts out as if it replied STOP; the next sync suppresses it (source sms_optout) and tells the webhooks', async () => {
    const opted = await app.request('POST', '/api/sandbox/sms/opt-outs', { token: app.adminToken, body: { phone: '(415) 555-0123' } });
    expect(opted.status, JSON.stringify(opted.body)).to.equal(201);
    expect(opted.body).to.deep.equal({ phone: '+14155550123' });
    expect((await app.request('POST', '/api/sms/sync-optouts', { token: app.adminToken })).body).to.deep.equal({ synced: 1, total: 1 });
    const listed = (await app.request('GET', '/api/suppressions', { token: app.adminToken })).body.items;
    expect(listed).to.deep.include.members([{ ...listed.find((i: { phone?: string }) => i.phone === '+14155550123'), reason: 'sms_optout', source: 'sms_optout' }]);
    const [hook] = await eventually(async () => receiver.requests.map((r) => JSON.parse(r.body)), (b) => b.length === 1);
    expect(hook).to.deep.include({ event: 'contact.suppressed' });
    expect(hook.data).to.include({ phone: '+14155550123', source: 'sms_optout', email: null });
  });

  it('400 for what is no phone number; a dashboard session only', async () => {
    const bad = await app.request('POST', '/api/sandbox/sms/opt-outs', { token: app.adminToken, body: { phone: 'not a number' } });
    expect(bad.status).to.equal(400);
    expect(bad.body.message).to.equal('phone: not a number is not a valid phone number (E.164, or a 10-digit US number)');
    expect((await app.request('POST', '/api/sandbox/sms/opt-outs', { body: { phone: '+14155550124' } })).status).to.equal(401);
  });
});
