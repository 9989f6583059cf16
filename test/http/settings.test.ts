import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/app.js';
import { withoutAwsCredentials } from '../support/aws-credentials.js';

describe('account settings: GET/PATCH /api/settings', function () {
  this.timeout(30_000);
  let app: TestApp;
  const get = (token = app.adminToken) => app.request('GET', '/api/settings', { token });
  const patch = (body: unknown, token = app.adminToken) => app.request('PATCH', '/api/settings', { token, body });

  before(async () => {
    app = await startTestApp({ POSTMARK_SERVER_TOKEN: 'configured' });
  });
  after(async () => app?.close());

  it('a new account has a cap of 1000, the sandbox provider and service tracking', async () => {
    const res = await get();
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ dailySendCap: 1000, emailProvider: 'sandbox', tracking: 'service', providerRatePerSecond: null });
  });

  it('PATCH changes only the fields given and answers the whole settings; GET shows them', async () => {
    const res = await patch({ dailySendCap: 250 });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ dailySendCap: 250, emailProvider: 'sandbox', tracking: 'service', providerRatePerSecond: null });
    expect((await patch({ emailProvider: 'ses', tracking: 'none' })).body).to.deep.equal({ dailySendCap: 250, emailProvider: 'ses', tracking: 'none', providerRatePerSecond: null });
    expect((await patch({ emailProvider: 'postmark', tracking: 'provider' })).body).to.include({ emailProvider: 'postmark', tracking: 'provider', providerRatePerSecond: null });
    expect((await get()).body).to.deep.equal({ dailySendCap: 250, emailProvider: 'postmark', tracking: 'provider', providerRatePerSecond: null });
    await patch({ dailySendCap: 1000, emailProvider: 'sandbox', tracking: 'service', providerRatePerSecond: null });
  });

  it('400 for values outside the contract, naming the field', async () => {
    const cases: [unknown, RegExp][] = [
      [{ dailySendCap: 0 }, /^dailySendCap: /],
      [{ dailySendCap: -5 }, /^dailySendCap: /],
      [{ dailySendCap: 1.5 }, /^dailySendCap: /],
      [{ dailySendCap: '100' }, /^dailySendCap: /],
      // past a 32-bit integer: once recorded, the accounts read model could not store it
      [{ dailySendCap: 2_147_483_648 }, /^dailySendCap: /],
      [{ dailySendCap: Number.MAX_SAFE_INTEGER }, /^dailySendCap: /],
      [{ emailProvider: 'mailgun' }, /^emailProvider: /],
      [{ tracking: 'pixel' }, /^tracking: /],
      [{ surprise: true }, /surprise/],
    ];
    for (const [body, message] of cases) {
      const res = await patch(body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.message).to.match(message);
    }
    expect((await get()).body).to.deep.equal({ dailySendCap: 1000, emailProvider: 'sandbox', tracking: 'service', providerRatePerSecond: null });
  });

  it('the largest cap the read models hold is accepted, and the read model keeps up after it', async () => {
    expect((await patch({ dailySendCap: 2_147_483_647 })).body).to.include({ dailySendCap: 2_147_483_647 });
    expect((await patch({ dailySendCap: 1000 })).status).to.equal(200);
    expect((await get()).body.dailySendCap).to.equal(1000);
  });

  it('settings are per account, and an API key cannot read or change them', async () => {
    const other = await app.request('POST', '/api/auth/signup', { body: { accountName: 'Other', email: 'owner@settings.example', password: 'other-password' } });
    expect((await patch({ dailySendCap: 5 }, other.body.token)).status).to.equal(200);
    expect((await get(other.body.token)).body.dailySendCap).to.equal(5);
    expect((await get()).body.dailySendCap).to.equal(1000);
    const { key } = await app.createApiKey(['send']);
    expect((await app.request('GET', '/api/settings', { apiKey: key })).status).to.be.oneOf([401, 403]);
    expect((await app.request('PATCH', '/api/settings', { apiKey: key, body: { dailySendCap: 1 } })).status).to.be.oneOf([401, 403]);
    expect((await app.request('GET', '/api/settings')).status).to.equal(401);
  });
});

describe('account settings without Postmark credentials', function () {
  this.timeout(30_000);
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => app?.close());

  it('choosing postmark is a 400 naming the missing setting, and nothing changes', async () => {
    const res = await app.request('PATCH', '/api/settings', { token: app.adminToken, body: { emailProvider: 'postmark' } });
    expect(res.status).to.equal(400);
    expect(res.body.message).to.equal('emailProvider: postmark is not configured (POSTMARK_SERVER_TOKEN is not set)');
    expect((await app.request('GET', '/api/settings', { token: app.adminToken })).body.emailProvider).to.equal('sandbox');
  });
});

describe('GET /api/settings/providers: whether this server can call each provider', function () {
  this.timeout(30_000);
  const providers = async (env: Record<string, string>) => {
    const app = await startTestApp(env);
    try {
      return (await app.request('GET', '/api/settings/providers', { token: app.adminToken })).body;
    } finally {
      await app.close();
    }
  };

  it('without AWS credentials SES and SNS say what is missing, and choosing SES is still allowed; with them both are ready', async () => {
    const restore = withoutAwsCredentials();
    try {
      const bare = await providers({ SMS_PROVIDER: 'sns' });
      expect(bare.email.ses.ready).to.equal(false);
      expect(bare.email.ses.problem).to.match(/^no AWS credentials were found on this server \(.*\): set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE, or give it an IAM role$/);
      expect(bare.email.postmark).to.deep.equal({ ready: false, problem: 'POSTMARK_SERVER_TOKEN is not set' });
      expect(bare.email.sandbox).to.deep.equal({ ready: true, problem: null });
      expect(bare.sms).to.include({ provider: 'sns', ready: false });

      const app = await startTestApp();
      try {
        expect((await app.request('PATCH', '/api/settings', { token: app.adminToken, body: { emailProvider: 'ses' } })).status).to.equal(200);
      } finally {
        await app.close();
      }

      process.env.AWS_ACCESS_KEY_ID = 'AKIDTEST';
      process.env.AWS_SECRET_ACCESS_KEY = 'test-secret';
      const configured = await providers({ SMS_PROVIDER: 'sns', POSTMARK_SERVER_TOKEN: 'configured' });
      expect(configured.email).to.deep.equal({ ses: { ready: true, problem: null }, postmark: { ready: true, problem: null }, sandbox: { ready: true, problem: null } });
      expect(configured.sms).to.deep.equal({ provider: 'sns', ready: true, problem: null });
    } finally {
      restore();
    }
  });

  it('the sandbox SMS provider is always ready', async () => {
    expect((await providers({ SMS_PROVIDER: 'sandbox' })).sms).to.deep.equal({ provider: 'sandbox', ready: true, problem: null });
  });
});
