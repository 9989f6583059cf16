import { expect } from 'chai';
import { ADMIN_EMAIL, startTestApp, type TestApp } from '../support/app.js';
import { eventually } from '../support/email-setup.js';
import { resetPassword } from '../../src/commands/reset-password.js';

/** The whole trail of the account behind `token`, newest first, once it shows `action` (it is a read model). */
async function trailWith(app: TestApp, token: string, action: string, count = 1): Promise<any[]> {
  const res = await eventually(
    () => app.request('GET', '/api/audit?limit=100', { token }),
    (r) => r.status === 200 && r.body.items.filter((i: any) => i.action === action).length >= count,
  );
  return res.body.items;
}

describe('audit trail: GET /api/audit', function () {
  this.timeout(60_000);
  let app: TestApp;
  before(async () => {
    // the default TRUST_PROXY: the test client (loopback) is a trusted proxy, its X-Forwarded-For counts
    app = await startTestApp();
  });
  after(async () => app?.close());

  it('lists the admin actions newest first: who (with email), from which address, what, on what, before and after', async () => {
    const from = { 'x-forwarded-for': '203.0.113.9' };
    expect((await app.request('PATCH', '/api/settings', { token: app.adminToken, headers: from, body: { dailySendCap: 4000 } })).status).to.equal(200);
    const key = await app.request('POST', '/api/api-keys', { token: app.adminToken, headers: from, body: { name: 'ci', scopes: ['send'] } });
    expect((await app.request('DELETE', `/api/api-keys/${key.body.id}`, { token: app.adminToken, headers: from })).status).to.equal(200);
    const hook = await app.request('POST', '/api/webhooks', { token: app.adminToken, headers: from, body: { url: 'http://127.0.0.1:9/hook' } });
    expect((await app.request('POST', '/api/suppressions', { token: app.adminToken, headers: from, body: { email: 'gone@example.org' } })).status).to.equal(201);
    expect((await app.request('DELETE', '/api/suppressions/gone@example.org', { token: app.adminToken, headers: from })).status).to.equal(200);
    expect((await app.request('POST', '/api/domains', { token: app.adminToken, headers: from, body: { domain: 'audit.example.com' } })).status).to.equal(201);

    const items = await trailWith(app, app.adminToken, 'domain.added');
    const actions = items.map((i) => i.action);
    expect(actions.slice(0, 7)).to.deep.equal([
      'domain.added',
      'suppression.removed',
      'suppression.added',
      'webhook.created',
      'api_key.revoked',
      'api_key.created',
      'settings.changed',
    ]);
    // the test app's own sign-in, from the loopback client
    expect(actions).to.include('user.signed_in');
    const settings = items.find((i) => i.action === 'settings.changed');
    expect(settings).to.deep.include({
      ip: '203.0.113.9',
      target: { type: 'account', id: 'default' },
      changes: { dailySendCap: { from: 1000, to: 4000 } },
    });
    expect(settings.actor).to.include({ type: 'user', email: ADMIN_EMAIL });
    expect(Date.parse(settings.at)).to.be.closeTo(Date.now(), 60_000);
    expect(items.find((i) => i.action === 'webhook.created').target).to.deep.equal({ type: 'webhook', id: hook.body.id });
    // the key's secret and the webhook's secret appear nowhere in the trail
    const text = JSON.stringify(items);
    expect(text).not.to.include(key.body.key);
    expect(text).not.to.include(hook.body.secret);
  });

  it('records a sign-in with the address the trusted proxy forwarded', async () => {
    const login = await app.request('POST', '/api/auth/login', { headers: { 'x-forwarded-for': '198.51.100.23, 10.0.0.1' }, body: { email: ADMIN_EMAIL, password: 'correct-horse-battery' } });
    expect(login.status).to.equal(200);
    const items = await trailWith(app, app.adminToken, 'user.signed_in', 2);
    const signIn = items.find((i) => i.action === 'user.signed_in');
    expect(signIn).to.deep.include({ ip: '198.51.100.23', target: { type: 'user', id: signIn.actor.id } });
    expect(signIn.actor).to.include({ type: 'user', email: ADMIN_EMAIL });
    // a failed sign-in is no admin action and records nothing
    const failed = await app.request('POST', '/api/auth/login', { body: { email: ADMIN_EMAIL, password: 'wrong-password' } });
    expect(failed.status).to.equal(401);
  });

  it('is for dashboard users only: no credentials 401, an API key 401 or 403', async () => {
    expect((await app.request('GET', '/api/audit')).status).to.equal(401);
    const { key } = await app.createApiKey(['send', 'read_events', 'contacts:read', 'contacts:write']);
    expect([401, 403]).to.include((await app.request('GET', '/api/audit', { apiKey: key })).status);
  });

  it("shows one account's actions only", async () => {
    const signup = await app.request('POST', '/api/auth/signup', { body: { accountName: 'Other', email: 'owner@audit-other.example', password: 'another-password' } });
    expect(signup.status).to.equal(201);
    const other = signup.body.token;
    await app.request('PATCH', '/api/settings', { token: other, body: { tracking: 'none' } });
    const theirs = await trailWith(app, other, 'settings.changed');
    expect(theirs.map((i) => i.action)).to.deep.equal(['settings.changed', 'user.created', 'account.created']);
    expect(theirs[0].target).to.deep.equal({ type: 'account', id: signup.body.accountId });
    const ours = (await app.request('GET', '/api/audit?limit=100', { token: app.adminToken })).body.items;
    expect(ours.filter((i: any) => i.target.id === signup.body.accountId || i.actor.email === 'owner@audit-other.example')).to.deep.equal([]);
  });

  it('pages with an opaque cursor, newest first, each entry once; a bad cursor or limit is a 400', async () => {
    for (const name of ['t1', 't2', 't3', 't4', 't5']) {
      await app.request('POST', '/api/templates', { token: app.adminToken, body: { name, subject: 's', html: '<p>h</p>', text: 't' } });
    }
    const all = await trailWith(app, app.adminToken, 'template.created', 5);
    const seen: any[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await app.request('GET', `/api/audit?limit=3${cursor ? `&cursor=${cursor}` : ''}`, { token: app.adminToken });
      expect(page.status).to.equal(200);
      expect(page.body.items.length).to.be.at.most(3);
      seen.push(...page.body.items);
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).to.deep.equal(all);
    const times = seen.map((i) => Date.parse(i.at));
    expect(times).to.deep.equal([...times].sort((a, b) => b - a));
    for (const bad of ['cursor=not-a-cursor', 'limit=0', 'limit=101']) {
      const res = await app.request('GET', `/api/audit?${bad}`, { token: app.adminToken });
      expect(res.status, bad).to.equal(400);
      expect(res.body).to.include.keys('message', 'error', 'statusCode');
    }
  });

  it('narrows the trail to an action or a family of them, an actor, a target and a time range, each page under the same filters', async () => {
    const key = await app.createApiKey(['contacts:write']);
    const hook = (await app.request('POST', '/api/webhooks', { token: app.adminToken, body: { url: 'http://127.0.0.1:9/filtered' } })).body;
    expect((await app.request('PATCH', `/api/webhooks/${hook.id}`, { token: app.adminToken, body: { events: ['contact.bounced'] } })).status).to.equal(200);
    expect((await app.request('POST', '/api/contacts', { apiKey: key.key, body: { email: 'filtered@example.org' } })).status).to.equal(201);
    expect((await app.request('DELETE', `/api/webhooks/${hook.id}`, { token: app.adminToken })).status).to.equal(200);
    const all = await trailWith(app, app.adminToken, 'webhook.deleted');
    const filtered = async (query: string) => {
      const res = await app.request('GET', `/api/audit?limit=100&${query}`, { token: app.adminToken });
      expect(res.status, `${query}: ${JSON.stringify(res.body)}`).to.equal(200);
      return res.body.items as any[];
    };

    expect((await filtered('action=webhook.changed')).map((i) => i.target.id)).to.deep.equal([hook.id]);
    expect(new Set((await filtered('action=webhook.*')).map((i) => i.action))).to.deep.equal(new Set(['webhook.created', 'webhook.changed', 'webhook.deleted']));
    expect((await filtered(`target=${hook.id}`)).map((i) => i.action)).to.deep.equal(['webhook.deleted', 'webhook.changed', 'webhook.created']);
    expect((await filtered(`actor=${key.id}`)).map((i) => i.action)).to.deep.equal(['contact.created']);
    expect((await filtered(`actor=${key.id}&action=webhook.*`))).to.deep.equal([]);

    // a time range: from is inclusive, to is not
    const changed = all.find((i) => i.action === 'webhook.changed');
    expect((await filtered(`from=${changed.at}&to=${all[0].at}&target=${hook.id}`)).map((i) => i.action)).to.deep.equal(['webhook.changed']);
    expect(await filtered(`to=${all[all.length - 1].at}`)).to.deep.equal([]);

    // paging keeps the filters: every template.created, three a page, nothing else
    const seen: any[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await app.request('GET', `/api/audit?limit=3&action=template.created${cursor ? `&cursor=${cursor}` : ''}`, { token: app.adminToken });
      seen.push(...page.body.items);
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen.map((i) => i.action)).to.deep.equal(Array(5).fill('template.created'));

    for (const bad of ['action=webhook', 'action=webhook.%25', 'action=*', 'from=yesterday', 'to=2026-13-01T00:00:00Z', 'actor=']) {
      const res = await app.request('GET', `/api/audit?${bad}`, { token: app.adminToken });
      expect(res.status, bad).to.equal(400);
    }
  });
});

describe('audit trail behind TRUST_PROXY=false', function () {
  this.timeout(60_000);
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ TRUST_PROXY: 'false' });
  });
  after(async () => app?.close());

  it('actor=system is every system actor: the service, and the command line (cli)', async () => {
    const email = 'owner@audit-cli.example';
    const signup = await app.request('POST', '/api/auth/signup', { body: { accountName: 'Cli', email, password: 'another-password' } });
    expect(signup.status).to.equal(201);
    const { password } = await resetPassword({ eventStore: app.infra.eventStore }, email, 'cli');
    const token = (await eventually(() => app.request('POST', '/api/auth/login', { body: { email, password } }), (r) => r.status === 200)).body.token;
    const bySystem = await eventually(
      () => app.request('GET', '/api/audit?actor=system', { token }),
      (r) => r.body.items?.some((i: any) => i.actor.id === 'cli'),
    );
    expect(bySystem.body.items.map((i: any) => [i.actor.id, i.action])).to.deep.equal([
      ['cli', 'user.password_changed'],
      ['system', 'user.created'],
      ['system', 'account.created'],
    ]);
  });

  it("records the connection's address: X-Forwarded-For from an untrusted peer is the caller's own claim", async () => {
    await app.request('PATCH', '/api/settings', { token: app.adminToken, headers: { 'x-forwarded-for': '203.0.113.66' }, body: { dailySendCap: 1500 } });
    const items = await trailWith(app, app.adminToken, 'settings.changed');
    expect(items.find((i) => i.action === 'settings.changed').ip).to.equal('127.0.0.1');
  });
});
