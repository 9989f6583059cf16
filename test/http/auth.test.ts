import { expect } from 'chai';
import { spawnServer } from '../support/spawn-server.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually } from '../support/email-setup.js';

/** Every per-key control with its exact status and message. */
describe('API key authentication', function () {
  this.timeout(60_000);
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => app?.close());

  const listMessages = (apiKey?: string, headers: Record<string, string> = {}) => app.request('GET', '/api/messages', { apiKey, headers });
  const expectError = (res: { status: number; body: any }, status: number, message: string) => {
    expect(res.status).to.equal(status);
    expect(res.body).to.deep.equal({ message, error: { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found' }[status], statusCode: status });
  };

  it('accepts a valid key with the scope', async () => {
    const { key } = await app.createApiKey(['read_events']);
    const res = await listMessages(key);
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ items: [], nextCursor: null });
  });

  it('401 invalid API key: missing or unknown key', async () => {
    expectError(await listMessages(), 401, 'invalid API key');
    expectError(await listMessages('cl_not-a-real-key'), 401, 'invalid API key');
  });

  it('403 for a valid key without the endpoint scope, naming the scope', async () => {
    const { key } = await app.createApiKey(['send']);
    expectError(await listMessages(key), 403, 'API key is missing required scope: read_events');
    // every read_events endpoint alike
    for (const path of ['/api/messages/some-id', '/api/messages/aggregate']) expectError(await app.request('GET', path, { apiKey: key }), 403, 'API key is missing required scope: read_events');
    const sms = await app.request('POST', '/api/send/sms', { apiKey: key, body: { to: '+14155550100', body: 'hi' } });
    expectError(sms, 403, 'API key is missing required scope: sms:send');
  });

  it('answers concurrent requests with different keys (looked up together) each by its own key', async () => {
    const reader = await app.createApiKey(['read_events']);
    const sender = await app.createApiKey(['send']);
    const revoked = await app.createApiKey(['read_events']);
    expect((await app.request('DELETE', `/api/api-keys/${revoked.id}`, { token: app.adminToken })).status).to.equal(200);
    const keys = [reader.key, sender.key, 'cl_not-a-real-key', revoked.key, reader.key, undefined];
    const answers = await Promise.all(keys.map((k) => listMessages(k)));
    expect(answers.map((r) => r.status)).to.deep.equal([200, 403, 401, 401, 200, 401]);
    expectError(answers[1], 403, 'API key is missing required scope: read_events');
    expectError(answers[3], 401, 'invalid API key');
  });

  it('401 API key expired, for a key that expires while in use, on every keyed endpoint', async () => {
    const expiresAt = new Date(Date.now() + 1500).toISOString();
    const { key } = await app.createApiKey(['read_events', 'sms:send', 'contacts:write'], { expiresAt });
    expect((await listMessages(key)).status).to.equal(200);
    await new Promise((r) => setTimeout(r, Date.parse(expiresAt) - Date.now() + 50));
    expectError(await listMessages(key), 401, 'API key expired');
    expectError(await app.request('POST', '/api/send/sms', { apiKey: key, body: { to: '+14155550100', body: 'hi' } }), 401, 'API key expired');
    expectError(await app.request('POST', '/api/contacts', { apiKey: key, body: { email: 'late@example.org' } }), 401, 'API key expired');
    expectError(await app.request('POST', '/api/contacts/import', { apiKey: key, body: { contacts: [{ email: 'late@example.org' }] } }), 401, 'API key expired');
  });

  it('401 API key denied for this client IP: exact IPv4/IPv6 match on the first X-Forwarded-For hop', async () => {
    const { key } = await app.createApiKey(['read_events'], { ipAllowlist: ['203.0.113.7', '2001:DB8:0:0:0:0:0:1'] });
    expect((await listMessages(key, { 'x-forwarded-for': '203.0.113.7, 10.0.0.1' })).status).to.equal(200);
    expect((await listMessages(key, { 'x-forwarded-for': '2001:db8::1' })).status).to.equal(200);
    expectError(await listMessages(key, { 'x-forwarded-for': '10.0.0.1, 203.0.113.7' }), 401, 'API key denied for this client IP');
    expectError(await listMessages(key, { 'x-forwarded-for': '203.0.113.8' }), 401, 'API key denied for this client IP');
    // no header: the socket address (127.0.0.1) is not listed
    expectError(await listMessages(key), 401, 'API key denied for this client IP');
  });

  it('normalises IPv4-mapped IPv6 in the allowlist and the socket address', async () => {
    const { key } = await app.createApiKey(['read_events'], { ipAllowlist: ['::ffff:127.0.0.1'] });
    expect((await listMessages(key)).status).to.equal(200);
  });

  it('refuses a CIDR range, an unknown scope, and a dailyLimit not below the account cap at creation', async () => {
    const create = (body: object) => app.request('POST', '/api/api-keys', { token: app.adminToken, body: { name: 'k', scopes: ['send'], ...body } });
    const cidr = await create({ ipAllowlist: ['10.0.0.0/8'] });
    expect(cidr.status).to.equal(400);
    expect(cidr.body.message).to.match(/CIDR/);
    const scope = await create({ scopes: ['send', 'admin'] });
    expect(scope.status).to.equal(400);
    expect(scope.body.message).to.equal('scopes.1: unknown scope: admin (valid scopes: send, sms:send, read_events, contacts:read, contacts:write)');
    expect((await create({ dailyLimit: 1000 })).status).to.equal(400);
    expect((await create({ dailyLimit: 999 })).status).to.equal(201);
  });

  it('lists every problem of scopes and ipAllowlist at once, each under its field, and creates nothing', async () => {
    const before = (await app.request('GET', '/api/api-keys', { token: app.adminToken })).body.items.length;
    const res = await app.request('POST', '/api/api-keys', {
      token: app.adminToken,
      body: { name: 'x', scopes: ['bogus', 'send', 'admin'], ipAllowlist: ['10.0.0.0/8', '127.0.0.1', 'localhost'] },
    });
    const valid = '(valid scopes: send, sms:send, read_events, contacts:read, contacts:write)';
    expect(res.status).to.equal(400);
    expect(res.body.message).to.equal(`scopes.0: unknown scope: bogus ${valid}`);
    expect(res.body.issues).to.deep.equal([
      { field: 'scopes.0', message: `unknown scope: bogus ${valid}` },
      { field: 'scopes.2', message: `unknown scope: admin ${valid}` },
      { field: 'ipAllowlist.0', message: '10.0.0.0/8 is not a single IPv4 or IPv6 address (CIDR ranges are unsupported)' },
      { field: 'ipAllowlist.2', message: 'localhost is not a single IPv4 or IPv6 address (CIDR ranges are unsupported)' },
    ]);
    expect((await app.request('GET', '/api/api-keys', { token: app.adminToken })).body.items).to.have.length(before);
  });

  it('400 for a key that would be expired at creation, naming expiresAt; nothing is created', async () => {
    const before = (await app.request('GET', '/api/api-keys', { token: app.adminToken })).body.items.length;
    for (const expiresAt of ['2020-01-01T00:00:00.000Z', new Date(Date.now() - 1000).toISOString()]) {
      const res = await app.request('POST', '/api/api-keys', { token: app.adminToken, body: { name: 'late', scopes: ['send'], expiresAt } });
      expectError(res, 400, `expiresAt must be in the future (it is ${expiresAt})`);
    }
    expect((await app.request('GET', '/api/api-keys', { token: app.adminToken })).body.items).to.have.length(before);
  });

  it('shows the secret once, stores only its hash, and never lists it', async () => {
    const created = await app.request('POST', '/api/api-keys', { token: app.adminToken, body: { name: 'once', scopes: ['read_events'] } });
    expect(created.status).to.equal(201);
    expect(created.body.key).to.match(/^cl_[A-Za-z0-9_-]{43}$/);
    expect(created.body).to.include.keys('id', 'name', 'key', 'scopes', 'expiresAt', 'ipAllowlist', 'dailyLimit', 'createdAt');
    await listMessages(created.body.key);
    // lastUsedAt is written beside the request, not before its answer
    const item = await eventually(
      async () => (await app.request('GET', '/api/api-keys', { token: app.adminToken })).body.items.find((k: any) => k.id === created.body.id),
      (k) => k.lastUsedAt !== null,
    );
    expect(item).to.not.have.property('key');
    expect(item.lastUsedAt).to.be.a('string');
    expect(item.revokedAt).to.equal(null);
    const stored = await app.infra.db('api_keys').where({ id: created.body.id }).first();
    expect(JSON.stringify(stored)).to.not.include(created.body.key);
    const events = await app.infra.eventStore.readStream(`apikey-${created.body.id}`);
    expect(JSON.stringify(events.map((e) => [e.data, e.metadata]))).to.not.include(created.body.key);
  });

  it('a key created while the read model is late (no worker catching it up) is answered 201 with its secret, and works once the read model has it', async function () {
    this.timeout(60_000);
    // the accounts read model held back past the read-your-writes wait (10 s): its checkpoint row locked
    const hold = await app.infra.db.transaction();
    let created: Awaited<ReturnType<typeof app.request>>;
    try {
      await hold('projection_checkpoints').where({ name: 'accounts' }).forUpdate().select('name');
      created = await app.request('POST', '/api/api-keys', { token: app.adminToken, body: { name: 'late', scopes: ['read_events'] } });
    } finally {
      await hold.rollback();
    }
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect(created.body.key).to.match(/^cl_/);
    expect((await eventually(() => listMessages(created.body.key), (r) => r.status === 200)).status).to.equal(200);
    const keys = (await app.request('GET', '/api/api-keys', { token: app.adminToken })).body.items.filter((k: any) => k.name === 'late');
    expect(keys).to.have.length(1);
  });

  it('401 invalid API key on the very next request after revocation, in another server process too', async () => {
    const { id, key } = await app.createApiKey(['read_events']);
    const other = await spawnServer('api', { DATABASE_URL: app.config.DATABASE_URL! });
    try {
      const viaOther = () => fetch(`${other.baseUrl}/api/messages`, { headers: { 'x-api-key': key } });
      expect((await viaOther()).status).to.equal(200);
      const revoked = await app.request('DELETE', `/api/api-keys/${id}`, { token: app.adminToken });
      expect(revoked.status).to.equal(200);
      expect(revoked.body.id).to.equal(id);
      expect(revoked.body.revokedAt).to.be.a('string');
      const next = await viaOther();
      expect(next.status).to.equal(401);
      expect(await next.json()).to.deep.equal({ message: 'invalid API key', error: 'Unauthorized', statusCode: 401 });
      expectError(await listMessages(key), 401, 'invalid API key');
    } finally {
      await other.stop();
    }
  });

  it('an API key never opens an admin endpoint; a JWT never reaches another account', async () => {
    const { id, key } = await app.createApiKey(['send', 'sms:send', 'read_events', 'contacts:read', 'contacts:write']);
    for (const [method, path] of [
      ['GET', '/api/api-keys'],
      ['GET', '/api/settings'],
      ['POST', '/api/webhooks'],
      ['GET', '/api/suppressions'],
    ] as const) {
      const res = await app.request(method, path, { apiKey: key, body: method === 'POST' ? {} : undefined });
      expect(res.status, `${method} ${path}`).to.be.oneOf([401, 403]);
    }
    const signup = await app.request('POST', '/api/auth/signup', { body: { accountName: 'Other', email: 'owner@other.example', password: 'another-password' } });
    expect(signup.status).to.equal(201);
    const otherToken = signup.body.token;
    expect((await app.request('DELETE', `/api/api-keys/${id}`, { token: otherToken })).status).to.equal(404);
    const keys = await app.request('GET', '/api/api-keys', { token: otherToken });
    expect(keys.body.items).to.deep.equal([]);
  });

  it('dashboard login: a token for good credentials, 401 otherwise; signup refuses a taken email', async () => {
    const bad = await app.request('POST', '/api/auth/login', { body: { email: 'admin@localhost', password: 'wrong-password' } });
    expect(bad.status).to.equal(401);
    const good = await app.request('POST', '/api/auth/login', { body: { email: 'ADMIN@localhost', password: 'correct-horse-battery' } });
    expect(good.status).to.equal(200);
    expect(good.body).to.have.keys('token', 'expiresAt');
    const dup = await app.request('POST', '/api/auth/signup', { body: { accountName: 'Dup', email: 'admin@localhost', password: 'whatever-pass' } });
    expect(dup.status).to.equal(409);
    expect((await app.request('GET', '/api/settings', { token: 'not.a.jwt' })).status).to.equal(401);
  });
});

describe('signup on a server with the default settings (ALLOW_SIGNUP unset)', function () {
  this.timeout(60_000);
  let app: TestApp;
  before(async () => {
    // an empty value counts as unset: the server's own default
    app = await startTestApp({ ALLOW_SIGNUP: '' });
  });
  after(async () => app?.close());

  it('403 signup is disabled on this server; no account is created', async () => {
    expect(app.config.ALLOW_SIGNUP).to.equal(false);
    const res = await app.request('POST', '/api/auth/signup', { body: { accountName: 'Stranger', email: 'stranger@example.com', password: 'stranger-password' } });
    expect(res.status).to.equal(403);
    expect(res.body).to.deep.equal({ message: 'signup is disabled on this server', error: 'Forbidden', statusCode: 403 });
    const login = await app.request('POST', '/api/auth/login', { body: { email: 'stranger@example.com', password: 'stranger-password' } });
    expect(login.status).to.equal(401);
  });

  it('403 whatever the body: an invalid or malformed one is not read', async () => {
    for (const body of [{}, { accountName: '', email: 'not-an-email', password: 'x' }]) {
      const res = await app.request('POST', '/api/auth/signup', { body });
      expect(res.status, JSON.stringify(res.body)).to.equal(403);
      expect(res.body).to.deep.equal({ message: 'signup is disabled on this server', error: 'Forbidden', statusCode: 403 });
    }
  });
});

describe('the API key IP allowlist behind TRUST_PROXY', function () {
  this.timeout(60_000);
  let app: TestApp;
  before(async () => {
    // No proxy is trusted: the tests' own loopback connection is a client like any other.
    app = await startTestApp({ TRUST_PROXY: 'false' });
  });
  after(async () => app?.close());

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy: the socket address is checked', async () => {
    const fenced = await app.createApiKey(['read_events'], { ipAllowlist: ['10.9.8.7'] });
    const spoofed = await app.request('GET', '/api/messages', { apiKey: fenced.key, headers: { 'x-forwarded-for': '10.9.8.7' } });
    expect(spoofed.status).to.equal(401);
    expect(spoofed.body).to.deep.equal({ message: 'API key denied for this client IP', error: 'Unauthorized', statusCode: 401 });
    const local = await app.createApiKey(['read_events'], { ipAllowlist: ['127.0.0.1'] });
    const direct = await app.request('GET', '/api/messages', { apiKey: local.key, headers: { 'x-forwarded-for': '10.9.8.7' } });
    expect(direct.status).to.equal(200);
  });
});
