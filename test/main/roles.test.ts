import { expect } from 'chai';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { eventually } from '../support/email-setup.js';
import { runTs } from '../support/run-command.js';
import { spawnServer, type SpawnedServer } from '../support/spawn-server.js';

const ADMIN = { email: 'admin@localhost', password: 'roles-test-password' };

async function call(base: string, method: string, path: string, token?: string, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json() };
}

/** Adds a domain once a worker has caught the accounts read model up (503 until then). */
const addDomainOnceReady = (base: string, token: string, domain: string) =>
  eventually(() => call(base, 'POST', '/api/domains', token, { domain }), (r) => r.status !== 503, 20_000);

describe('roles (npm run start:api / start:worker)', function () {
  this.timeout(60_000);
  let testDb: TestDatabase;
  const servers: SpawnedServer[] = [];

  beforeEach(async () => {
    testDb = await createTestDatabase({ migrate: false });
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.stop()));
    await testDb.drop();
  });

  for (const role of ['api', 'worker']) {
    it(`the ${role} role refuses to start without DATABASE_URL instead of starting a private database`, async () => {
      const result = await runTs('src/main.ts', [role], { NODE_NO_WARNINGS: '1' }, { unset: ['DATABASE_URL'] });
      expect(result.code).to.equal(1);
      expect(result.stderr.trim()).to.equal(
        `The ${role} role needs DATABASE_URL: the api and worker roles share one PostgreSQL, so set DATABASE_URL to it (or run both in one process with npm start).`,
      );
    });
  }

  it('an API process that is first on a new database serves its read models before any worker has started', async () => {
    const api = await spawnServer('api', { DATABASE_URL: testDb.url, ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password });
    servers.push(api);
    const login = await call(api.baseUrl, 'POST', '/api/auth/login', undefined, ADMIN);
    expect(login.status).to.equal(200);
    const token = login.body.token as string;
    for (const path of ['/api/domains', '/api/senders', '/api/templates', '/api/suppressions', '/api/messages', '/api/contacts']) {
      const res = await call(api.baseUrl, 'GET', path, token);
      expect(res.status, `${path}: ${JSON.stringify(res.body)}`).to.equal(200);
    }

    // A write that needs the account's settings says why it cannot be made yet.
    const early = await call(api.baseUrl, 'POST', '/api/domains', token, { domain: 'roles.example.com' });
    expect(early).to.deep.equal({
      status: 503,
      body: { message: 'the accounts read model is not up to date yet; is a worker running?', error: 'Service Unavailable', statusCode: 503 },
    });

    // A worker started later catches the read models up; the same write then succeeds and is read back.
    servers.push(await spawnServer('worker', { DATABASE_URL: testDb.url }));
    const created = await addDomainOnceReady(api.baseUrl, token, 'roles.example.com');
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const listed = await call(api.baseUrl, 'GET', '/api/domains', token);
    expect(listed.body.items.map((d: { domain: string }) => d.domain)).to.deep.equal(['roles.example.com']);
  });

  it('a worker whose clock runs 5 s ahead of the database delivers a send at once, not when the sweeper finds it', async () => {
    const env = { DATABASE_URL: testDb.url, ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password };
    const api = await spawnServer('api', env);
    servers.push(api);
    servers.push(
      await spawnServer('worker', { ...env, CLOCK_OFFSET_MS: '5000' }, { nodeArgs: ['--import', fileURLToPath(new URL('../support/clock-ahead.mjs', import.meta.url))] }),
    );
    const token = (await call(api.baseUrl, 'POST', '/api/auth/login', undefined, ADMIN)).body.token as string;
    const domain = await addDomainOnceReady(api.baseUrl, token, 'skew.example.com');
    expect(domain.status, JSON.stringify(domain.body)).to.equal(201);

    const key = await call(api.baseUrl, 'POST', '/api/api-keys', token, { name: 'skew', scopes: ['send'] });
    const res = await fetch(`${api.baseUrl}/api/send/transactional`, {
      method: 'POST',
      headers: { 'x-api-key': key.body.key, 'content-type': 'application/json' },
      body: JSON.stringify({ to: 'reader@example.org', fromEmail: 'app@skew.example.com', subject: 'Skewed', html: '<p>Hello</p>', text: 'Hello' }),
    });
    const sent = { status: res.status, body: await res.json() };
    expect(sent.status, JSON.stringify(sent.body)).to.equal(201);
    // The worker's process manager records the send as due at its own "now", 5 s past the database's.
    const queuedAt = Date.now();
    const message = await eventually(() => call(api.baseUrl, 'GET', `/api/messages/${sent.body.messageLogId}`, token), (m) => m.body.status === 'sent', 20_000);
    expect(message.body.status, JSON.stringify(message.body)).to.equal('sent');
    expect(Date.now() - queuedAt).to.be.below(10_000);
  });
});
