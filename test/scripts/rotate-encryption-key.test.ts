import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { eventually } from '../support/email-setup.js';
import { runTs } from '../support/run-command.js';
import { call } from '../support/http-call.js';
import { spawnServer, type SpawnedServer } from '../support/spawn-server.js';

const ADMIN = { email: 'owner@rotate.example', password: 'rotate-test-password' };
const OLD = randomBytes(32).toString('base64');
const NEW = randomBytes(32).toString('hex');
const UNSET = ['REDIS_URL', 'EVENTSTORE_URL'];

describe('npm run admin -- rotate-encryption-key: a new ENCRYPTION_KEY for sealed data', function () {
  this.timeout(180_000);
  let testDb: TestDatabase;
  let service: SpawnedServer | undefined;
  let env: Record<string, string>;
  let messageId: string;
  const start = async (key: string) => {
    service = await spawnServer('all', { ...env, ENCRYPTION_KEY: key }, { unset: UNSET, startTimeoutMs: 60_000 });
    const login = await eventually(() => call(service!.baseUrl, 'POST', '/api/auth/login', { body: ADMIN }), (r) => r.status === 200, 20_000);
    return { base: service.baseUrl, token: login.body.token as string };
  };
  const rotate = (extra: Record<string, string>, ...args: string[]) => runTs('scripts/admin.ts', ['rotate-encryption-key', ...args], { ...env, ...extra }, { unset: UNSET });

  before(async () => {
    testDb = await createTestDatabase({ migrate: false });
    env = { DATABASE_URL: testDb.url, ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, NODE_NO_WARNINGS: '1' };
    const { base, token } = await start(OLD);
    const domain = await eventually(() => call(base, 'POST', '/api/domains', { token, body: { domain: 'rotate.example.com' } }), (r) => r.status !== 503, 20_000);
    expect(domain.status, JSON.stringify(domain.body)).to.equal(201);
    const key = await call(base, 'POST', '/api/api-keys', { token, body: { name: 'rotate', scopes: ['send'] } });
    for (const email of ['ada@example.org', 'alan@example.org', 'grace@example.org']) {
      expect((await call(base, 'POST', '/api/contacts', { token, body: { email, firstName: email.split('@')[0] } })).status).to.equal(201);
    }
    expect((await call(base, 'POST', '/api/suppressions', { token, body: { email: 'gone@example.org' } })).status).to.equal(201);
    const sent = await call(base, 'POST', '/api/send/transactional', {
      key: key.body.key,
      body: { to: 'reader@example.org', fromEmail: 'app@rotate.example.com', subject: 'Sealed-Subject', html: '<p>Hello</p>', text: 'Hello' },
    });
    expect(sent.status, JSON.stringify(sent.body)).to.equal(201);
    messageId = sent.body.messageLogId;
    await service!.stop();
    service = undefined;
  });
  after(async () => {
    await service?.stop();
    await testDb?.drop();
  });

  it('refuses a previous key that is not the one the data was written with, and changes nothing', async () => {
    const result = await rotate({ ENCRYPTION_KEY: NEW, ENCRYPTION_KEY_PREVIOUS: randomBytes(32).toString('base64') });
    expect(result.code, result.stdout + result.stderr).to.equal(1);
    expect(result.stderr.trim().split('\n')).to.have.length(1);
    // the previous key is the one to fix, and the message says so
    expect(result.stderr).to.match(/^neither ENCRYPTION_KEY nor ENCRYPTION_KEY_PREVIOUS is the key the stored personal data was encrypted with: set ENCRYPTION_KEY_PREVIOUS/);
    expect(await testDb.db('data_keys').where({ scope: 'person-hash' })).to.have.length(0);
  });

  it('needs both keys', async () => {
    const result = await rotate({ ENCRYPTION_KEY: NEW });
    expect(result.code).to.equal(1);
    expect(result.stderr).to.match(/needs ENCRYPTION_KEY \(the new key\) and ENCRYPTION_KEY_PREVIOUS/);
  });

  it('re-wraps every data key in batches; run again, it finds them done', async () => {
    const before = await testDb.db('data_keys').select('id', 'wrapped');
    expect(before.length).to.be.at.least(5);
    const first = await rotate({ ENCRYPTION_KEY: NEW, ENCRYPTION_KEY_PREVIOUS: OLD }, '--batch', '2');
    expect(first.code, first.stderr).to.equal(0);
    // every key, and the address-hashing key it stored first
    expect(first.stdout).to.include(`${before.length} re-wrapped, 1 already under the new key, 0 opened by neither key`);
    const after = new Map((await testDb.db('data_keys').select('id', 'wrapped')).map((r) => [r.id, r.wrapped.toString('hex')]));
    for (const row of before) expect(after.get(row.id)).to.not.equal(row.wrapped.toString('hex'));

    const again = await rotate({ ENCRYPTION_KEY: NEW, ENCRYPTION_KEY_PREVIOUS: OLD });
    expect(again.code, again.stderr).to.equal(0);
    expect(again.stdout).to.include(`0 re-wrapped, ${before.length + 1} already under the new key`);
  });

  it('the service starts with the new key alone and reads everything; addresses hash as before', async () => {
    const { base, token } = await start(NEW);
    const message = await call(base, 'GET', `/api/messages/${messageId}`, { token });
    expect(message.body).to.include({ to: 'reader@example.org', subject: 'Sealed-Subject' });
    const contacts = await call(base, 'GET', '/api/contacts?search=ada', { token });
    expect(contacts.body.items.map((c: { email: string; firstName: string }) => [c.email, c.firstName])).to.deep.equal([['ada@example.org', 'ada']]);
    // the same person as before (one stream per keyed hash): an update, not a second contact
    expect((await call(base, 'POST', '/api/contacts', { token, body: { email: 'ada@example.org', lastName: 'Lovelace' } })).status).to.equal(200);
    const suppressions = await call(base, 'GET', '/api/suppressions', { token });
    expect(suppressions.body.items.map((s: { email: string }) => s.email)).to.include('gone@example.org');
    await service!.stop();
    service = undefined;
  });

  it('a start with the old key is refused with the start-up error', async () => {
    const result = await runTs('src/main.ts', ['all'], { ...env, ENCRYPTION_KEY: OLD }, { unset: UNSET });
    expect(result.code).to.not.equal(0);
    expect(result.stdout + result.stderr).to.include('ENCRYPTION_KEY is not the key the stored personal data was encrypted with: set the key it was written with.');
  });
});
