import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { retentionOf } from '../support/retention.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { queueDirect, runScript, untilSent } from '../support/messages-http.js';
import { eventually, readyToSend } from '../support/email-setup.js';

const DAY = 86_400_000;

describe('retention: PATCH /api/settings {retentionDays} and the daily job', function () {
  this.timeout(120_000);
  let app: TestApp;
  let accountId: string;
  const OLD = 'Old-Body-Marker-41d';
  const NEW = 'New-Body-Marker-2d';
  let old: string;
  let recent: string;

  before(async () => {
    app = await startTestApp();
    accountId = (await app.infra.db('accounts').first('id')).id;
    // their sender's domain verified, as at their admission: their provider calls, weeks later, look again
    await readyToSend(app);
    old = await queueDirect(app, { accountId, to: 'old.reader@example.org', subject: `${OLD} subject`, html: `<p>${OLD}</p>`, text: OLD, queuedAt: new Date(Date.now() - 41 * DAY).toISOString() });
    recent = await queueDirect(app, { accountId, to: 'new.reader@example.org', subject: `${NEW} subject`, html: `<p>${NEW}</p>`, text: NEW, queuedAt: new Date(Date.now() - 2 * DAY).toISOString() });
    await untilSent(app, [old, recent]);
  });
  after(async () => app?.close());

  const retention = () => retentionOf(app);

  it('is unset (keep everything) by default, takes a number of days or null, and refuses anything else', async () => {
    expect((await app.request('GET', '/api/settings', { token: app.adminToken })).body).to.not.have.property('retentionDays');
    const unset = await app.request('PATCH', '/api/settings', { token: app.adminToken, body: { retentionDays: 7 } });
    expect(unset.body.retentionDays).to.equal(7);
    expect((await app.request('PATCH', '/api/settings', { token: app.adminToken, body: { retentionDays: null } })).body).to.not.have.property('retentionDays');
    for (const bad of [0, -1, 1.5, 'thirty', 36_501]) {
      expect((await app.request('PATCH', '/api/settings', { token: app.adminToken, body: { retentionDays: bad } })).status, String(bad)).to.equal(400);
    }
    // nothing expires while it is unset
    expect(await retention().apply()).to.deep.equal({ accounts: 0, keys: 0 });
    const set = await app.request('PATCH', '/api/settings', { token: app.adminToken, body: { retentionDays: 30 } });
    expect(set.status).to.equal(200);
    expect(set.body.retentionDays).to.equal(30);
    expect((await app.request('GET', '/api/settings', { token: app.adminToken })).body).to.include({ retentionDays: 30, dailySendCap: 1000 });
  });

  it('makes older message content unreadable everywhere; newer messages, statuses and counts stay', async () => {
    const aggregate = (await app.request('GET', '/api/messages/aggregate', { token: app.adminToken })).body;
    const first = await retention().apply();
    expect(first.keys).to.equal(1);
    // again the same day: nothing more
    expect((await retention().apply()).keys).to.equal(0);
    await waitForRow(old);
    const oldView = await app.request('GET', `/api/messages/${old}`, { token: app.adminToken });
    expect(oldView.status).to.equal(200);
    expect(oldView.body).to.include({ to: null, subject: null, status: 'sent' });
    const history = await app.request('GET', `/api/messages/${old}/history`, { token: app.adminToken });
    expect(history.body[0].data).to.include({ to: null, html: null, text: null });
    const kept = await app.request('GET', `/api/messages/${recent}`, { token: app.adminToken });
    expect(kept.body).to.include({ to: 'new.reader@example.org', subject: `${NEW} subject` });
    expect((await app.request('GET', '/api/messages/aggregate', { token: app.adminToken })).body).to.deep.equal(aggregate);

    const { stdout } = await promisify(execFile)('pg_dump', ['--no-owner', app.config.DATABASE_URL!], { maxBuffer: 256 * 1024 * 1024 });
    expect(stdout).to.include(NEW);
    expect(stdout).to.not.include(OLD).and.to.not.include('old.reader@example.org');
  });

  it('a rebuild after it gives the same rows', async () => {
    const snapshot = async () => ({
      messages: await app.infra.db('messages').orderBy('id'),
      changes: await app.infra.db('message_changes').orderBy(['commit_pos', 'prepare_pos']),
    });
    const live = await snapshot();
    for (const name of ['messages', 'message_changes']) expect((await runScript(app, 'rebuild', [name])).code).to.equal(0);
    expect(await snapshot()).to.deep.equal(live);
  });

  /** until the messages read model has applied the cutoff to the row */
  const waitForRow = (id: string) => eventually(() => app.infra.db('messages').where({ id }).first('to_address'), (row) => row.to_address === null);

  it('deletes the provider reports parked before the retention period (they name no account: the shortest retention applies)', async () => {
    // parked for a message not (yet) known; the worker drops them after seven days, retention sooner
    for (const [id, days] of [['parked-old', 3], ['parked-new', 0]] as const) {
      await app.infra.db('unmatched_provider_events').insert({
        provider_event_id: id,
        provider_message_id: `pm-${id}`,
        payload: JSON.stringify({ recipient: `${id}@example.org` }),
        received_at: new Date(Date.now() - days * DAY),
      });
    }
    expect((await app.request('PATCH', '/api/settings', { token: app.adminToken, body: { retentionDays: 2 } })).status).to.equal(200);
    await retention().apply();
    expect((await app.infra.db('unmatched_provider_events').select('provider_event_id')).map((r) => r.provider_event_id)).to.deep.equal(['parked-new']);
  });
});
