import { expect } from 'chai';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestApp, type TestApp } from '../support/app.js';

const LOGIN_MESSAGE = 'too many failed sign-in attempts';
const KEY_MESSAGE = 'too many failed API key attempts from this address';
const WINDOW_SECONDS = 900;

function expectThrottled(res: { status: number; body: any; headers: Headers }, message: string) {
  expect(res.status).to.equal(429);
  const retryAfter = res.headers.get('retry-after');
  expect(retryAfter).to.match(/^\d+$/);
  expect(Number(retryAfter)).to.be.within(1, WINDOW_SECONDS);
  // the wait in words too
  expect(res.body).to.include({ error: 'Too Many Requests', statusCode: 429 }).and.have.keys('message', 'error', 'statusCode');
  expect(res.body.message).to.match(new RegExp(`^${message}; try again in \\d+ (seconds?|minutes?)$`));
}

// Small limits so a handful of requests reach them; the tests connect from loopback, a trusted proxy by
// default, so X-Forwarded-For stands for clients at different addresses.
const LIMITS = {
  LOGIN_FAILURES_PER_ACCOUNT_AND_IP: '3',
  LOGIN_FAILURES_PER_ACCOUNT: '5',
  LOGIN_FAILURES_PER_IP: '8',
  API_KEY_FAILURES_PER_IP: '4',
  THROTTLE_WINDOW_SECONDS: String(WINDOW_SECONDS),
};

describe('sign-in and API key throttling', function () {
  this.timeout(60_000);
  let app: TestApp;
  let accounts = 0;
  before(async () => {
    app = await startTestApp(LIMITS);
  });
  after(async () => app?.close());

  /** A new account of its own, so each test starts with clean per-account counts. */
  async function newAccount(): Promise<string> {
    const email = `owner${++accounts}@throttle.example`;
    const res = await app.request('POST', '/api/auth/signup', { body: { accountName: `A${accounts}`, email, password: 'right-password' } });
    expect(res.status).to.equal(201);
    return email;
  }
  const login = (email: string, password: string, from: string) =>
    app.request('POST', '/api/auth/login', { body: { email, password }, headers: { 'x-forwarded-for': from } });

  it('after the consecutive failures for an account from one address: 429 with Retry-After, even for the right password', async () => {
    const email = await newAccount();
    for (let i = 0; i < 3; i++) expect((await login(email, 'wrong-password', '198.51.100.1')).status).to.equal(401);
    expectThrottled(await login(email, 'wrong-password', '198.51.100.1'), LOGIN_MESSAGE);
    expectThrottled(await login(email, 'right-password', '198.51.100.1'), LOGIN_MESSAGE);
    // the owner signing in from elsewhere is not locked out by it
    expect((await login(email, 'right-password', '198.51.100.2')).status).to.equal(200);
  });

  it('a successful sign-in clears the consecutive failures (not the account\'s own count)', async () => {
    const email = await newAccount();
    // 2 + 2 failures in a row from one address, past its limit of 3 without the success between them
    for (let round = 0; round < 2; round++) {
      expect((await login(email, 'wrong-password', '198.51.100.3')).status).to.equal(401);
      expect((await login(email, 'wrong-password', '198.51.100.3')).status).to.equal(401);
      expect((await login(email, 'right-password', '198.51.100.3')).status).to.equal(200);
    }
  });

  it('throttles an account whose failures come from many addresses', async () => {
    const email = await newAccount();
    for (let i = 1; i <= 5; i++) expect((await login(email, 'wrong-password', `203.0.113.${i}`)).status).to.equal(401);
    expectThrottled(await login(email, 'wrong-password', '203.0.113.6'), LOGIN_MESSAGE);
    expectThrottled(await login(email, 'right-password', '203.0.113.7'), LOGIN_MESSAGE);
    // other accounts are not
    expect((await login(await newAccount(), 'right-password', '203.0.113.7')).status).to.equal(200);
  });

  it('throttles an address trying many accounts, known or not', async () => {
    for (let i = 0; i < 8; i++) expect((await login(`nobody${i}@throttle.example`, 'wrong-password', '192.0.2.50')).status).to.equal(401);
    expectThrottled(await login('nobody-else@throttle.example', 'wrong-password', '192.0.2.50'), LOGIN_MESSAGE);
    expectThrottled(await login(await newAccount(), 'right-password', '192.0.2.50'), LOGIN_MESSAGE);
    expect((await login('nobody0@throttle.example', 'wrong-password', '192.0.2.51')).status).to.equal(401);
  });

  it('counts attempts made at once: no more than the limit get their password checked', async () => {
    const email = await newAccount();
    const answers = await Promise.all(Array.from({ length: 20 }, () => login(email, 'wrong-password', '198.51.100.9')));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).to.have.length(3);
    expect(statuses.filter((s) => s === 429)).to.have.length(17);
  });

  it('a bad request body is answered 400 and counts for nothing', async () => {
    const email = await newAccount();
    for (let i = 0; i < 5; i++) {
      const res = await app.request('POST', '/api/auth/login', { body: { email }, headers: { 'x-forwarded-for': '198.51.100.10' } });
      expect(res.status).to.equal(400);
    }
    expect((await login(email, 'right-password', '198.51.100.10')).status).to.equal(200);
  });

  it('after API key failures from an address: 429 with Retry-After; a good key and other addresses are unaffected', async () => {
    const messages = (apiKey: string, from: string) => app.request('GET', '/api/messages', { apiKey, headers: { 'x-forwarded-for': from } });
    const { key } = await app.createApiKey(['read_events']);
    const revoked = await app.createApiKey(['read_events']);
    expect((await app.request('DELETE', `/api/api-keys/${revoked.id}`, { token: app.adminToken })).status).to.equal(200);
    const fenced = await app.createApiKey(['read_events'], { ipAllowlist: ['10.9.8.7'] });

    for (const bad of ['cl_unknown-1', revoked.key, fenced.key, 'cl_unknown-2']) {
      expect((await messages(bad, '198.51.100.20')).status).to.equal(401);
    }
    expectThrottled(await messages('cl_unknown-3', '198.51.100.20'), KEY_MESSAGE);
    expectThrottled(await messages(revoked.key, '198.51.100.20'), KEY_MESSAGE);
    // The send route checks its key inside the send statement: throttled the same way.
    const send = await app.request('POST', '/api/send/transactional', {
      apiKey: 'cl_unknown-4',
      headers: { 'x-forwarded-for': '198.51.100.20' },
      body: { from: 'a@example.com', to: 'b@example.com', subject: 's', html: '<p>x</p>' },
    });
    expectThrottled(send, KEY_MESSAGE);
    expect((await messages(key, '198.51.100.20')).status).to.equal(200);
    expect((await messages('cl_unknown-1', '198.51.100.21')).status).to.equal(401);
    // a scope refusal is a good key, not a failure
    const sender = await app.createApiKey(['send']);
    for (let i = 0; i < 6; i++) expect((await messages(sender.key, '198.51.100.22')).status).to.equal(403);
  });
});

describe('throttling when no proxy is trusted', function () {
  this.timeout(60_000);
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ ...LIMITS, TRUST_PROXY: 'false' });
  });
  after(async () => app?.close());

  it('counts by the socket address: a changing X-Forwarded-For does not dodge the limits', async () => {
    for (let i = 1; i <= 4; i++) {
      const res = await app.request('GET', '/api/messages', { apiKey: 'cl_unknown', headers: { 'x-forwarded-for': `203.0.113.${i}` } });
      expect(res.status).to.equal(401);
    }
    const res = await app.request('GET', '/api/messages', { apiKey: 'cl_unknown', headers: { 'x-forwarded-for': '203.0.113.99' } });
    expectThrottled(res, KEY_MESSAGE);

    const login = (from: string) =>
      app.request('POST', '/api/auth/login', { body: { email: 'admin@localhost', password: 'wrong-password' }, headers: { 'x-forwarded-for': from } });
    for (let i = 1; i <= 3; i++) expect((await login(`198.51.100.${i}`)).status).to.equal(401);
    expectThrottled(await login('198.51.100.99'), LOGIN_MESSAGE);
  });

});

describe("sign-in and API key throttling with the limiter's store away", function () {
  this.timeout(60_000);
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => app?.close());

  it('a sign-in and a refused key are answered 503 with Retry-After, not let through uncounted; a valid key still works', async () => {
    const login = () => app.request('POST', '/api/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    const { key } = await app.createApiKey(['read_events']);
    const { db } = app.infra;
    await db.raw('ALTER TABLE rate_limits RENAME TO rate_limits_away');
    try {
      for (const res of [await login(), await app.request('GET', '/api/messages', { apiKey: 'cl_unknown' })]) {
        expect(res.status, JSON.stringify(res.body)).to.equal(503);
        expect(res.headers.get('retry-after')).to.equal('1');
        expect(res.body).to.deep.equal({ message: 'The rate limiter is unavailable (its store could not be reached); try again in a moment', error: 'Service Unavailable', statusCode: 503 });
      }
      expect((await app.request('GET', '/api/messages', { apiKey: key })).status).to.equal(200);
    } finally {
      await db.raw('ALTER TABLE rate_limits_away RENAME TO rate_limits');
    }
    expect((await login()).status).to.equal(200);
  });
});
