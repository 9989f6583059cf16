import { expect } from 'chai';
import { execute } from '../../src/commands/execute.js';
import { WEBHOOK_EVENTS, webhookStream, webhookSubscriptionDecider } from '../../src/domain/webhooks/subscription.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually } from '../support/email-setup.js';
import { hookRequests, newAccount, startScriptedReceiver, webhookClient } from '../support/webhook-receiver.js';

const badRequest = (message: string) => ({ message, error: 'Bad Request', statusCode: 400 });

describe('webhook subscriptions: /api/webhooks', function () {
  this.timeout(60_000);
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => app?.close());

  it('POST → 201 {id, url, events, secret, createdAt}: all four events by default, a fresh secret each time', async () => {
    const admin = webhookClient(app);
    const res = await admin.call('POST', '/api/webhooks', { url: 'https://hooks.example.com/in' });
    expect(res.status).to.equal(201);
    expect(res.body).to.have.keys('id', 'url', 'events', 'secret', 'createdAt');
    expect(res.body.url).to.equal('https://hooks.example.com/in');
    expect(res.body.events).to.deep.equal([...WEBHOOK_EVENTS]);
    expect(res.body.secret).to.match(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(Date.parse(res.body.createdAt)).to.be.closeTo(Date.now(), 10_000);
    const other = await admin.subscribe('https://hooks.example.com/in');
    expect(other.id).to.not.equal(res.body.id);
    expect(other.secret).to.not.equal(res.body.secret);

    const filtered = await admin.call('POST', '/api/webhooks', { url: 'http://hooks.example.com/b', events: ['contact.bounced', 'contact.bounced', 'contact.complained'] });
    expect(filtered.status).to.equal(201);
    expect(filtered.body.events).to.deep.equal(['contact.bounced', 'contact.complained']);
  });

  it('GET lists the account’s subscriptions with their secrets (admins may read them); never another account’s', async () => {
    const account = await newAccount(app);
    const a = await account.subscribe('https://a.example.com/hook');
    const b = await account.subscribe('https://b.example.com/hook', ['contact.unsubscribed']);
    const list = await account.call('GET', '/api/webhooks');
    expect(list.status).to.equal(200);
    expect(list.body.items).to.deep.equal([a, b]);
    const stranger = await newAccount(app);
    expect((await stranger.call('GET', '/api/webhooks')).body).to.deep.equal({ items: [] });
  });

  it('POST /api/webhooks/:id/reveal-secret answers the signing secret, recorded in the audit trail without it; 404 outside the account', async () => {
    const account = await newAccount(app);
    const sub = await account.subscribe('https://a.example.com/hook');
    const revealed = await app.request('POST', `/api/webhooks/${sub.id}/reveal-secret`, { token: account.token, headers: { 'x-forwarded-for': '192.0.2.44' } });
    expect(revealed.status).to.equal(200);
    expect(revealed.body).to.deep.equal({ id: sub.id, secret: sub.secret });
    const trail = await eventually(
      () => account.call('GET', '/api/audit'),
      (r) => r.body.items?.some((i: any) => i.action === 'webhook.secret_revealed'),
    );
    const entry = trail.body.items.find((i: any) => i.action === 'webhook.secret_revealed');
    expect(entry).to.deep.include({ ip: '192.0.2.44', target: { type: 'webhook', id: sub.id }, changes: {} });
    expect(entry.actor.type).to.equal('user');
    expect(JSON.stringify(trail.body)).not.to.include(sub.secret);
    // the subscription itself is unchanged
    expect((await account.call('GET', '/api/webhooks')).body.items).to.deep.equal([sub]);

    const stranger = await newAccount(app);
    expect((await stranger.call('POST', `/api/webhooks/${sub.id}/reveal-secret`)).status).to.equal(404);
    expect((await account.call('POST', '/api/webhooks/nope/reveal-secret')).status).to.equal(404);
  });

  it('PATCH changes the URL or the filter and keeps the secret; DELETE removes; both 404 outside the account', async () => {
    const account = await newAccount(app);
    const sub = await account.subscribe('https://a.example.com/hook');
    const { secret } = sub;
    const changed = await account.call('PATCH', `/api/webhooks/${sub.id}`, { url: 'https://b.example.com/hook' });
    expect(changed.status).to.equal(200);
    expect(changed.body).to.deep.equal({ ...sub, url: 'https://b.example.com/hook' });
    const filtered = await account.call('PATCH', `/api/webhooks/${sub.id}`, { events: ['contact.complained'] });
    expect(filtered.body).to.deep.equal({ ...sub, url: 'https://b.example.com/hook', events: ['contact.complained'] });
    expect((await account.call('POST', `/api/webhooks/${sub.id}/reveal-secret`)).body.secret).to.equal(secret);

    const stranger = await newAccount(app);
    expect((await stranger.call('PATCH', `/api/webhooks/${sub.id}`, { url: 'https://evil.example.com/' })).status).to.equal(404);
    expect((await stranger.call('DELETE', `/api/webhooks/${sub.id}`)).status).to.equal(404);
    expect((await account.call('PATCH', '/api/webhooks/nope', { url: 'https://b.example.com/' })).status).to.equal(404);

    const removed = await account.call('DELETE', `/api/webhooks/${sub.id}`);
    expect(removed.status).to.equal(200);
    expect(removed.body).to.deep.equal({ id: sub.id, deleted: true });
    expect((await account.call('GET', '/api/webhooks')).body.items).to.deep.equal([]);
    expect((await account.call('DELETE', `/api/webhooks/${sub.id}`)).status).to.equal(404);
    expect((await account.call('GET', `/api/webhooks/${sub.id}/deliveries`)).status).to.equal(404);
  });

  it('400 in the error shape for an invalid body', async () => {
    const admin = webhookClient(app);
    const post = (body: unknown) => admin.call('POST', '/api/webhooks', body);
    expect((await post({})).body).to.deep.equal({
      ...badRequest('url: required'),
      issues: [{ field: 'url', message: 'required' }],
    });
    for (const body of [
      { url: 'not a url' },
      { url: 'ftp://files.example.com/' },
      { url: 'javascript:alert(1)' },
      { url: 'https://hooks.example.com/', events: ['contact.opened'] },
      { url: 'https://hooks.example.com/', events: [] },
      { url: 'https://hooks.example.com/', events: 'contact.bounced' },
      { url: 'https://hooks.example.com/', secret: 'mine' },
      { url: `https://hooks.example.com/${'a'.repeat(2100)}` },
    ]) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(Object.keys(res.body).filter((k) => k !== 'issues')).to.have.members(['message', 'error', 'statusCode']);
      expect(res.body.error).to.equal('Bad Request');
    }
    const malformed = await admin.call('POST', '/api/webhooks', '{"url":');
    expect(malformed.body).to.deep.equal(badRequest('Malformed JSON in request body'));
    const sub = await admin.subscribe('https://hooks.example.com/x');
    expect((await admin.call('PATCH', `/api/webhooks/${sub.id}`, { events: [] })).status).to.equal(400);
    expect((await admin.call('PATCH', `/api/webhooks/${sub.id}`, { url: 'ftp://x.example.com/' })).status).to.equal(400);
    // credentials in the URL would go out as Basic auth, and be shown to every admin and in the audit trail
    const credentials = 'url: a user name or password in the URL is not accepted: verify the signature instead';
    for (const url of ['https://user:s3cret@hooks.example.com/x', 'https://token@hooks.example.com/x']) {
      expect((await post({ url })).body.message, url).to.equal(credentials);
      expect((await admin.call('PATCH', `/api/webhooks/${sub.id}`, { url })).body.message, url).to.equal(credentials);
    }
    // an @ after the host is no credential
    expect((await post({ url: 'https://hooks.example.com/x?to=ops@example.com' })).status).to.equal(201);
  });

  it('admin endpoints: an API key never reaches them', async () => {
    const { key } = await app.createApiKey(['send', 'read_events']);
    for (const [method, path] of [
      ['GET', '/api/webhooks'],
      ['POST', '/api/webhooks'],
      ['PATCH', '/api/webhooks/x'],
      ['DELETE', '/api/webhooks/x'],
      ['POST', '/api/webhooks/x/test'],
      ['GET', '/api/webhooks/x/deliveries'],
      ['POST', '/api/webhook-deliveries/x/retry'],
    ]) {
      const res = await app.request(method, path, { apiKey: key, body: method === 'GET' ? undefined : { url: 'https://a.example.com/' } });
      expect([401, 403], `${method} ${path}`).to.include(res.status);
    }
  });
});

describe('webhook SSRF guard (WEBHOOK_ALLOW_PRIVATE_TARGETS=false)', function () {
  this.timeout(60_000);
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false', WEBHOOK_RETRY_DELAYS_MS: '60000' });
  });
  after(async () => app?.close());

  it('refuses endpoints at private, loopback, link-local and metadata addresses, and names resolving to them', async () => {
    const admin = webhookClient(app);
    for (const [url, address] of [
      ['http://127.0.0.1:8080/hook', '127.0.0.1'],
      ['http://10.1.2.3/hook', '10.1.2.3'],
      ['http://192.168.0.10/hook', '192.168.0.10'],
      ['http://169.254.169.254/latest/meta-data/', '169.254.169.254'],
      ['http://[::1]/hook', '::1'],
      ['http://[::ffff:127.0.0.1]/hook', '::ffff:7f00:1'],
      ['http://localhost:3000/hook', null],
    ] as const) {
      const res = await admin.call('POST', '/api/webhooks', { url });
      expect(res.status, url).to.equal(400);
      expect(res.body.error).to.equal('Bad Request');
      expect(res.body.message, url).to.match(
        /resolves to .*, a private, loopback, link-local or reserved address; webhooks may not target it \(WEBHOOK_ALLOW_PRIVATE_TARGETS=true allows private targets\)$/,
      );
      if (address) expect(res.body.message).to.include(address);
    }
    const ok = await admin.subscribe('http://93.184.215.14/hook');
    const patched = await admin.call('PATCH', `/api/webhooks/${ok.id}`, { url: 'http://127.0.0.1/hook' });
    expect(patched.status).to.equal(400);
    expect((await admin.call('GET', '/api/webhooks')).body.items.map((i: any) => i.url)).to.deep.equal(['http://93.184.215.14/hook']);
    await admin.call('DELETE', `/api/webhooks/${ok.id}`);
  });

  it('checks again at each attempt, on the address it would connect to: nothing reaches a private target', async () => {
    const account = await newAccount(app);
    const hook = await startScriptedReceiver([200]);
    try {
      // As if the endpoint's name resolved to a public address when it was created and to loopback now.
      const id = 'rebound-endpoint';
      await execute(
        webhookSubscriptionDecider,
        { kind: 'subscribe', id, accountId: account.accountId, fields: { url: hook.hook, events: [...WEBHOOK_EVENTS] }, secret: 'whsec_test', now: new Date().toISOString() },
        { eventStore: app.infra.eventStore, streamId: webhookStream(id), metadata: { actor: 'test' } },
      );
      await eventually(() => app.infra.db('webhooks').where({ id }).first(), (row) => Boolean(row));
      await account.suppress('victim@example.org');
      const item = await account.settled(id, 'retrying', 1);
      expect(item.lastResponseStatus).to.equal(null);
      expect(item.lastError).to.equal(
        '127.0.0.1 resolves to 127.0.0.1, a private, loopback, link-local or reserved address; webhooks may not target it (WEBHOOK_ALLOW_PRIVATE_TARGETS=true allows private targets)',
      );
      const test = await account.call('POST', `/api/webhooks/${id}/test`);
      expect(test.body).to.deep.include({ delivered: false, responseStatus: null });
      expect(hookRequests(hook)).to.have.length(0);
    } finally {
      await hook.close();
    }
  });
});
