import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually, readyToSend } from '../support/email-setup.js';
import { recordOutcome, sendOne, untilSent } from '../support/messages-http.js';

describe('GET /api/messages/timeseries', function () {
  this.timeout(60_000);
  let app: TestApp;
  let keyA: string;
  let keyB: string;
  const hour = (d: Date) => new Date(Math.floor(d.getTime() / 3_600_000) * 3_600_000).toISOString();
  const KINDS = ['sent', 'delivered', 'bounced', 'complained', 'opened', 'clicked'];
  const totals = (buckets: Record<string, number>[]) => Object.fromEntries(KINDS.map((k) => [k, buckets.reduce((n, b) => n + b[k], 0)]));
  const series = (auth: { token?: string; apiKey?: string }, query = '') => app.request('GET', `/api/messages/timeseries${query}`, auth);

  before(async () => {
    app = await startTestApp();
    const a = await readyToSend(app);
    keyA = a.key;
    const b = await readyToSend(app, { domain: 'other.example' });
    keyB = b.key;
    // a1 ends delivered (and opened), a2 sent, b1 bounced
    const sentA = [
      await sendOne(app, keyA, { to: 'x@example.org', fromEmail: a.from, subject: 's', tags: ['welcome', 'eu'], metadata: { plan: 'pro' } }),
      await sendOne(app, keyA, { to: 'y@example.org', fromEmail: a.from, subject: 's', tags: ['welcome'] }),
    ];
    const sentB = [await sendOne(app, keyB, { to: 'z@example.org', fromEmail: b.from, subject: 's', tags: ['welcome'], metadata: { plan: 'pro' } })];
    await untilSent(app, [...sentA, ...sentB]);
    await recordOutcome(app, sentA[0], 'Delivered');
    await recordOutcome(app, sentA[0], 'Opened');
    await recordOutcome(app, sentA[0], 'Opened', { suspectedBot: true });
    await recordOutcome(app, sentB[0], 'Bounced');
    await eventually(
      () => series({ token: app.adminToken }, '?interval=hour'),
      (r) => r.body.buckets.reduce((n: number, b: { bounced: number }) => n + b.bounced, 0) === 1 && r.body.buckets.some((b: { opened: number }) => b.opened === 1),
    );
  });
  after(async () => app?.close());

  it("a dashboard user sees the account's counts per hour, zero-padded, opens without suspected bots", async () => {
    const to = new Date();
    const from = new Date(to.getTime() - 3 * 3_600_000);
    const res = await series({ token: app.adminToken }, `?interval=hour&from=${from.toISOString()}&to=${to.toISOString()}`);
    expect(res.status).to.equal(200);
    expect(res.body.interval).to.equal('hour');
    expect(res.body.buckets.map((b: { at: string }) => b.at)).to.deep.equal([0, 1, 2, 3].map((i) => hour(new Date(from.getTime() + i * 3_600_000))));
    expect(totals(res.body.buckets)).to.deep.equal({ sent: 3, delivered: 1, bounced: 1, complained: 0, opened: 1, clicked: 0 });
  });

  it('an API key sees only what it sent', async () => {
    const res = await series({ apiKey: keyB }, '?interval=day');
    expect(res.status).to.equal(200);
    expect(totals(res.body.buckets)).to.deep.equal({ sent: 1, delivered: 0, bounced: 1, complained: 0, opened: 0, clicked: 0 });
  });

  it('days sum their hours; the default range is the last 30 days', async () => {
    const res = await series({ token: app.adminToken });
    expect(res.body.interval).to.equal('day');
    expect(res.body.buckets).to.have.length(31);
    expect(totals(res.body.buckets)).to.deep.equal({ sent: 3, delivered: 1, bounced: 1, complained: 0, opened: 1, clicked: 0 });
  });

  const ZERO = { sent: 0, delivered: 0, bounced: 0, complained: 0, opened: 0, clicked: 0 };
  const filtered = async (auth: { token?: string; apiKey?: string }, query: string) => {
    const res = await series(auth, `?interval=hour&${query}`);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return totals(res.body.buckets);
  };
  const jwt = () => ({ token: app.adminToken });

  it("status: the activity of the messages whose current status it is, all of it under that status", async () => {
    expect(await filtered(jwt(), 'status=delivered')).to.deep.equal({ ...ZERO, sent: 1, delivered: 1, opened: 1 });
    expect(await filtered(jwt(), 'status=sent')).to.deep.equal({ ...ZERO, sent: 1 });
    expect(await filtered(jwt(), 'status=bounced')).to.deep.equal({ ...ZERO, sent: 1, bounced: 1 });
    expect(await filtered(jwt(), 'status=failed')).to.deep.equal(ZERO);
  });

  it('tag: the activity of the messages carrying it', async () => {
    expect(await filtered(jwt(), 'tag=welcome')).to.deep.equal({ ...ZERO, sent: 3, delivered: 1, bounced: 1, opened: 1 });
    expect(await filtered(jwt(), 'tag=eu')).to.deep.equal({ ...ZERO, sent: 1, delivered: 1, opened: 1 });
    expect(await filtered(jwt(), 'tag=nobody')).to.deep.equal(ZERO);
  });

  it('metadata[key]=value: the activity of the messages whose metadata has that entry', async () => {
    expect(await filtered(jwt(), 'metadata%5Bplan%5D=pro')).to.deep.equal({ ...ZERO, sent: 2, delivered: 1, bounced: 1, opened: 1 });
    expect(await filtered(jwt(), 'metadata[plan]=free')).to.deep.equal(ZERO);
  });

  it('status with a tag or a metadata entry; an API key sees only its own messages under every filter', async () => {
    expect(await filtered(jwt(), 'status=bounced&tag=welcome')).to.deep.equal({ ...ZERO, sent: 1, bounced: 1 });
    expect(await filtered(jwt(), 'status=sent&metadata[plan]=pro')).to.deep.equal(ZERO);
    expect(await filtered({ apiKey: keyA }, 'tag=welcome')).to.deep.equal({ ...ZERO, sent: 2, delivered: 1, opened: 1 });
    expect(await filtered({ apiKey: keyA }, 'metadata[plan]=pro&status=delivered')).to.deep.equal({ ...ZERO, sent: 1, delivered: 1, opened: 1 });
    expect(await filtered({ apiKey: keyB }, 'metadata[plan]=pro')).to.deep.equal({ ...ZERO, sent: 1, bounced: 1 });
    expect(await filtered({ apiKey: keyB }, 'status=delivered')).to.deep.equal(ZERO);
  });

  it('refuses what counts cannot answer, naming it: search, and more than one tag or metadata entry', async () => {
    const search = await series(jwt(), '?search=x%40example.org');
    expect(search.status).to.equal(400);
    expect(search.body.message).to.match(/^search cannot filter the chart/);
    for (const q of ['tag=welcome&tag=eu', 'tag=welcome&metadata[plan]=pro', 'metadata[plan]=pro&metadata[team]=a']) {
      const res = await series(jwt(), `?${q}`);
      expect(res.status, q).to.equal(400);
      expect(res.body.message, q).to.match(/one tag or one metadata entry at a time/);
    }
    expect((await series(jwt(), '?status=opened')).status).to.equal(400);
    expect((await series(jwt(), '?tag=no%20spaces')).status).to.equal(400);
  });

  it('refuses a bad interval, a reversed range and a range of more than 1000 buckets', async () => {
    expect((await series({ token: app.adminToken }, '?interval=week')).status).to.equal(400);
    const reversed = await series({ token: app.adminToken }, '?from=2024-02-01T00:00:00Z&to=2024-01-01T00:00:00Z');
    expect(reversed.status).to.equal(400);
    expect(reversed.body.message).to.equal('from must not be after to');
    const wide = await series({ token: app.adminToken }, '?interval=hour&from=2020-01-01T00:00:00Z&to=2024-01-01T00:00:00Z');
    expect(wide.status).to.equal(400);
    expect(wide.body.message).to.match(/more than 1000 hours/);
  });

  it('needs read_events with a key, and a session or token otherwise', async () => {
    const key = await app.createApiKey(['send']);
    expect((await series({ apiKey: key.key })).status).to.equal(403);
    expect((await series({})).status).to.equal(401);
  });
});
