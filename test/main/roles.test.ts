import { expect } from 'chai';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
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
    let created = early;
    for (const deadline = Date.now() + 20_000; created.status === 503 && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 100));
      created = await call(api.baseUrl, 'POST', '/api/domains', token, { domain: 'roles.example.com' });
    }
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const listed = await call(api.baseUrl, 'GET', '/api/domains', token);
    expect(listed.body.items.map((d: { domain: string }) => d.domain)).to.deep.equal(['roles.example.com']);
  });
});
