import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/app.js';
import { sesEnv, startFakeSes, type FakeSes } from '../support/fake-ses.js';

const send = (app: TestApp, key: string, fromEmail: string) =>
  app.request('POST', '/api/send/transactional', { apiKey: key, body: { to: 'r@example.org', fromEmail, subject: 's', html: '<p>x</p>', text: 'x' } });

describe('domains and single senders with the sandbox provider', function () {
  this.timeout(30_000);
  let app: TestApp;
  const req = (method: string, path: string, body?: unknown, token = app.adminToken) => app.request(method, path, { token, body });

  before(async () => {
    app = await startTestApp();
  });
  after(async () => app?.close());

  it('a domain is verified at once, with the records to publish; it is listed and re-verifiable', async () => {
    const res = await req('POST', '/api/domains', { domain: 'Mail.Example.com' });
    expect(res.status).to.equal(201);
    expect(res.body).to.include({ domain: 'mail.example.com', dkim: 'verified', spf: 'verified', mailFrom: 'verified', verified: true });
    expect(res.body.dnsRecords).to.be.an('array').that.is.not.empty;
    expect((await req('GET', '/api/domains')).body.items.map((d: any) => d.id)).to.deep.equal([res.body.id]);
    const verify = await req('POST', `/api/domains/${res.body.id}/verify`);
    expect(verify.status).to.equal(200);
    expect(verify.body).to.include({ id: res.body.id, verified: true });
  });

  it('a single sender is verified at once and listed apart from domains', async () => {
    const res = await req('POST', '/api/senders', { email: 'Solo@Single.example' });
    expect(res.status).to.equal(201);
    expect(res.body).to.include({ email: 'solo@single.example', verified: true });
    expect((await req('GET', '/api/senders')).body.items.map((s: any) => s.email)).to.deep.equal(['solo@single.example']);
    expect((await req('GET', '/api/domains')).body.items.map((d: any) => d.domain)).to.not.include('solo@single.example');
  });

  it('409 for a duplicate; 400 for a malformed domain or address; 404 to verify an unknown or foreign id', async () => {
    await req('POST', '/api/domains', { domain: 'dup.example.com' });
    expect((await req('POST', '/api/domains', { domain: 'DUP.example.com' })).status).to.equal(409);
    for (const domain of ['not a domain', 'localhost', '-bad.example.com', 'a'.repeat(300) + '.com', '']) {
      const res = await req('POST', '/api/domains', { domain });
      expect(res.status, domain).to.equal(400);
      expect(res.body.message).to.match(/^domain: /);
    }
    expect((await req('POST', '/api/senders', { email: 'nope' })).status).to.equal(400);
    expect((await req('POST', '/api/domains/clh3am1yr0000qzrmn831i7rn/verify')).status).to.equal(404);
    const other = await app.request('POST', '/api/auth/signup', { body: { accountName: 'O', email: 'owner@ids.example', password: 'other-password' } });
    const mine = (await req('GET', '/api/domains')).body.items[0];
    expect((await req('POST', `/api/domains/${mine.id}/verify`, undefined, other.body.token)).status).to.equal(404);
    expect((await req('GET', '/api/domains', undefined, other.body.token)).body.items).to.deep.equal([]);
    // a domain id is not a sender id
    expect((await req('POST', `/api/senders/${mine.id}/verify`)).status).to.equal(404);
  });

  it('a removed domain or sender is no longer listed, and sending from it is refused; it can be added again', async () => {
    const { key } = await app.createApiKey(['send']);
    const domain = (await req('POST', '/api/domains', { domain: 'gone.example.com' })).body;
    const sender = (await req('POST', '/api/senders', { email: 'solo@gone.example.net' })).body;
    expect((await send(app, key, 'news@gone.example.com')).status).to.equal(201);
    expect((await send(app, key, 'solo@gone.example.net')).status).to.equal(201);

    expect((await req('DELETE', `/api/domains/${domain.id}`)).status).to.equal(204);
    expect((await req('DELETE', `/api/senders/${sender.id}`)).status).to.equal(204);
    expect((await req('GET', '/api/domains')).body.items.map((d: any) => d.domain)).to.not.include('gone.example.com');
    expect((await req('GET', '/api/senders')).body.items.map((s: any) => s.email)).to.not.include('solo@gone.example.net');
    for (const from of ['news@gone.example.com', 'solo@gone.example.net']) {
      const refused = await send(app, key, from);
      expect(refused.status, from).to.equal(400);
      expect(refused.body.message).to.match(/not verified/);
    }

    // removed once: a second removal, a verify, or the other kind's path find nothing
    expect((await req('DELETE', `/api/domains/${domain.id}`)).body).to.deep.equal({ message: `${domain.id} not found`, error: 'Not Found', statusCode: 404 });
    expect((await req('POST', `/api/domains/${domain.id}/verify`)).status).to.equal(404);
    const other = (await req('POST', '/api/domains', { domain: 'kept.example.com' })).body;
    expect((await req('DELETE', `/api/senders/${other.id}`)).status).to.equal(404);
    expect((await req('GET', '/api/domains')).body.items.map((d: any) => d.domain)).to.include('kept.example.com');

    const again = await req('POST', '/api/domains', { domain: 'gone.example.com' });
    expect(again.status).to.equal(201);
    expect(again.body.id).to.not.equal(domain.id);
    expect((await send(app, key, 'news@gone.example.com')).status).to.equal(201);
  });

  it("another account's identity cannot be removed (404), and stays", async () => {
    const mine = (await req('POST', '/api/domains', { domain: 'mine-only.example.com' })).body;
    const other = await app.request('POST', '/api/auth/signup', { body: { accountName: 'R', email: 'owner@remove.example', password: 'other-password' } });
    expect((await req('DELETE', `/api/domains/${mine.id}`, undefined, other.body.token)).status).to.equal(404);
    expect((await req('GET', '/api/domains')).body.items.map((d: any) => d.id)).to.include(mine.id);
  });

  it('an API key cannot manage identities', async () => {
    const { key } = await app.createApiKey(['send']);
    expect((await app.request('POST', '/api/domains', { apiKey: key, body: { domain: 'k.example.com' } })).status).to.be.oneOf([401, 403]);
  });
});

describe('domains and single senders through SES (fake SES v2 server, real SDK)', function () {
  this.timeout(30_000);
  let app: TestApp;
  let fake: FakeSes;
  let key: string;
  const req = (method: string, path: string, body?: unknown) => app.request(method, path, { token: app.adminToken, body });

  before(async () => {
    fake = await startFakeSes();
    app = await startTestApp(sesEnv(fake));
    expect((await req('PATCH', '/api/settings', { emailProvider: 'ses' })).status).to.equal(200);
    ({ key } = await app.createApiKey(['send']));
  });
  after(async () => {
    await app?.close();
    await fake?.close();
  });

  it('a new domain is pending with DKIM CNAMEs and MAIL FROM records; sending from it is refused', async () => {
    const res = await req('POST', '/api/domains', { domain: 'news.example.com' });
    expect(res.status).to.equal(201);
    expect(res.body).to.include({ domain: 'news.example.com', dkim: 'pending', spf: 'pending', mailFrom: 'pending', verified: false });
    expect(res.body.dnsRecords.map((r: any) => r.type)).to.deep.equal(['CNAME', 'CNAME', 'CNAME', 'MX', 'TXT']);
    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).to.include.members([
      'POST /v2/email/identities',
      'PUT /v2/email/identities/news.example.com/mail-from',
      'GET /v2/email/identities/news.example.com',
    ]);
    const refused = await send(app, key, 'app@news.example.com');
    expect(refused.status).to.equal(400);
    expect(refused.body.message).to.equal('app@news.example.com is not verified for sending');
  });

  it('verify follows SES: DKIM alone is not enough, MAIL FROM alone is not enough, all three verify the domain', async () => {
    const { body: d } = await req('GET', '/api/domains').then((r) => ({ body: r.body.items.find((x: any) => x.domain === 'news.example.com') }));
    fake.setIdentity('news.example.com', { dkim: 'SUCCESS', mailFrom: 'PENDING' });
    expect((await req('POST', `/api/domains/${d.id}/verify`)).body).to.include({ dkim: 'verified', spf: 'pending', mailFrom: 'pending', verified: false });
    fake.setIdentity('news.example.com', { dkim: 'PENDING', mailFrom: 'SUCCESS' });
    expect((await req('POST', `/api/domains/${d.id}/verify`)).body).to.include({ dkim: 'pending', spf: 'verified', mailFrom: 'verified', verified: false });
    fake.setIdentity('news.example.com', { dkim: 'FAILED', mailFrom: 'SUCCESS' });
    expect((await req('POST', `/api/domains/${d.id}/verify`)).body).to.include({ dkim: 'failed', verified: false });
    expect((await send(app, key, 'app@news.example.com')).status).to.equal(400);
    fake.setIdentity('news.example.com', { dkim: 'SUCCESS', mailFrom: 'SUCCESS' });
    expect((await req('POST', `/api/domains/${d.id}/verify`)).body).to.include({ dkim: 'verified', spf: 'verified', mailFrom: 'verified', verified: true });
    expect((await send(app, key, 'app@news.example.com')).status).to.equal(201);
  });

  it('a single sender waits for its confirmation in SES', async () => {
    const res = await req('POST', '/api/senders', { email: 'solo@elsewhere.example' });
    expect(res.body).to.include({ verified: false });
    expect((await send(app, key, 'solo@elsewhere.example')).status).to.equal(400);
    fake.setIdentity('solo@elsewhere.example', { verifiedForSending: true });
    expect((await req('POST', `/api/senders/${res.body.id}/verify`)).body).to.include({ verified: true });
    expect((await send(app, key, 'solo@elsewhere.example')).status).to.equal(201);
  });

  it('a domain the sandbox verified waits for SES after the switch: sends from it are refused until SES has checked it', async () => {
    await req('PATCH', '/api/settings', { emailProvider: 'sandbox' });
    const { body: d } = await req('POST', '/api/domains', { domain: 'moved.example.com' });
    expect(d.verified).to.equal(true);
    expect((await send(app, key, 'app@moved.example.com')).status).to.equal(201);
    await req('PATCH', '/api/settings', { emailProvider: 'ses' });
    const listed = (await req('GET', '/api/domains')).body.items.find((x: any) => x.id === d.id);
    expect(listed).to.include({ dkim: 'pending', spf: 'pending', mailFrom: 'pending', verified: false });
    const refused = await send(app, key, 'app@moved.example.com');
    expect(refused.status).to.equal(400);
    expect(refused.body.message).to.equal('app@moved.example.com is not verified for sending');
    const verify = await req('POST', `/api/domains/${d.id}/verify`);
    expect(verify.status).to.equal(200);
    expect(verify.body).to.include({ dkim: 'pending', verified: false });
    expect(fake.requests.some((r) => r.method === 'POST' && r.body?.EmailIdentity === 'moved.example.com')).to.equal(true);
    fake.setIdentity('moved.example.com', { dkim: 'SUCCESS', mailFrom: 'SUCCESS' });
    expect((await req('POST', `/api/domains/${d.id}/verify`)).body.verified).to.equal(true);
    expect((await send(app, key, 'app@moved.example.com')).status).to.equal(201);
  });
});

describe('one domain and several accounts of the service, sharing one SES account (fake SES v2 server)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let fake: FakeSes;
  const req = (method: string, path: string, body?: unknown, token = app.adminToken) => app.request(method, path, { token, body });
  /** a new account of the service, sending through SES unless told otherwise */
  const signup = async (name: string, provider: 'ses' | 'sandbox' = 'ses'): Promise<string> => {
    const res = await app.request('POST', '/api/auth/signup', { body: { accountName: name, email: `owner@${name}.example`, password: 'other-password' } });
    if (provider === 'ses') expect((await req('PATCH', '/api/settings', { emailProvider: 'ses' }, res.body.token)).status).to.equal(200);
    return res.body.token;
  };
  /** adds a domain (or a sender) and has SES verify it, as the owner's DNS records would */
  const proved = async (path: '/api/domains' | '/api/senders', value: string, token = app.adminToken) => {
    const added = await req('POST', path, path === '/api/domains' ? { domain: value } : { email: value }, token);
    expect(added.status, JSON.stringify(added.body)).to.equal(201);
    fake.setIdentity(value, path === '/api/domains' ? { dkim: 'SUCCESS', mailFrom: 'SUCCESS' } : { verifiedForSending: true });
    const verified = await req('POST', `${path}/${added.body.id}/verify`, undefined, token);
    expect(verified.body.verified, JSON.stringify(verified.body)).to.equal(true);
    return added.body;
  };

  before(async () => {
    fake = await startFakeSes();
    app = await startTestApp(sesEnv(fake));
    expect((await req('PATCH', '/api/settings', { emailProvider: 'ses' })).status).to.equal(200);
  });
  after(async () => {
    await app?.close();
    await fake?.close();
  });

  it("another account's verified domain, one of its verified senders, or an address on its domain cannot be claimed (409): SES would answer their verified status", async () => {
    await proved('/api/domains', 'claimed.example.com');
    await proved('/api/senders', 'solo@elsewhere.example.org');
    const other = await signup('claim', 'sandbox');
    const claims: [string, Record<string, string>, string][] = [
      ['/api/domains', { domain: 'Claimed.example.com' }, 'claimed.example.com is registered to another account'],
      ['/api/senders', { email: 'ceo@claimed.example.com' }, 'ceo@claimed.example.com is registered to another account'],
      ['/api/senders', { email: 'solo@elsewhere.example.org' }, 'solo@elsewhere.example.org is registered to another account'],
      // under its domain: a provider account that verified claimed.example.com lets every name below it send
      ['/api/domains', { domain: 'billing.claimed.example.com' }, 'billing.claimed.example.com is registered to another account'],
      ['/api/senders', { email: 'ceo@eu.billing.claimed.example.com' }, 'ceo@eu.billing.claimed.example.com is registered to another account'],
    ];
    for (const [path, body, message] of claims) {
      const res = await req('POST', path, body, other);
      expect(res.status, JSON.stringify(body)).to.equal(409);
      expect(res.body.message).to.equal(message);
    }
    // a domain of its own, and another address of a domain nobody holds, are its to add
    expect((await req('POST', '/api/domains', { domain: 'own-claim.example' }, other)).status).to.equal(201);
    expect((await req('POST', '/api/senders', { email: 'other@elsewhere.example.org' }, other)).status).to.equal(201);

    // a name added first, under a domain another account verifies after it: verifying it is refused from then on
    const early = (await req('POST', '/api/domains', { domain: 'mail.later-parent.example' }, other)).body;
    expect((await req('POST', `/api/domains/${early.id}/verify`, undefined, other)).status).to.equal(200);
    await proved('/api/domains', 'later-parent.example');
    const refused = await req('POST', `/api/domains/${early.id}/verify`, undefined, other);
    expect(refused.status).to.equal(409);
    expect(refused.body.message).to.equal('mail.later-parent.example is registered to another account');
  });

  it('a claim nobody has proved (pending at SES, or verified by the sandbox, which verifies anything) locks no one out; the first to have SES verify it holds it', async () => {
    const squatter = await signup('squat');
    const pending = await req('POST', '/api/domains', { domain: 'realcustomer.example' }, squatter);
    expect(pending.body.verified).to.equal(false);
    const sandboxSquatter = await signup('sandboxsquat', 'sandbox');
    expect((await req('POST', '/api/domains', { domain: 'bigmail.example' }, sandboxSquatter)).body.verified).to.equal(true);

    // the owner adds and verifies its own domain, a name under the other, and an address there
    const mine = await proved('/api/domains', 'realcustomer.example');
    expect((await req('POST', '/api/domains', { domain: 'news.bigmail.example' })).status).to.equal(201);
    expect((await req('POST', '/api/senders', { email: 'shop.owner@bigmail.example' })).status).to.equal(201);
    expect(mine.domain).to.equal('realcustomer.example');
    // from then on the squatter cannot verify it (SES would now answer the owner's status)
    const late = await req('POST', `/api/domains/${pending.body.id}/verify`, undefined, squatter);
    expect([late.status, late.body.message]).to.deep.equal([409, 'realcustomer.example is registered to another account']);
  });
});
