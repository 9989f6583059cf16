import { expect } from 'chai';
import { SignJWT } from 'jose';
import { resetPassword } from '../../src/commands/reset-password.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually } from '../support/email-setup.js';

/**
 * A signed-in user changes their own password (the generated one printed at first boot is no one's
 * choice), and a changed password, the user's own or an operator's reset, ends every session before it.
 */
describe('POST /api/auth/password', function () {
  this.timeout(60_000);
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ LOGIN_FAILURES_PER_ACCOUNT_AND_IP: '3' });
  });
  after(async () => app?.close());

  // Each test is an account of its own (a sign-up): its owner's password, sessions and failed sign-ins
  // are nobody else's, so one service serves them all.
  let n = 0;
  let ownerEmail = '';
  const OWNER_PASSWORD = 'the first long password';
  let token = '';
  beforeEach(async () => {
    ownerEmail = `owner${++n}@password.example`;
    const signup = await app.request('POST', '/api/auth/signup', { body: { accountName: `Password ${n}`, email: ownerEmail, password: OWNER_PASSWORD } });
    expect(signup.status, JSON.stringify(signup.body)).to.equal(201);
    token = signup.body.token;
  });

  const login = (password: string) => app.request('POST', '/api/auth/login', { body: { email: ownerEmail, password } });
  const change = (token: string, currentPassword: string, newPassword: string) =>
    app.request('POST', '/api/auth/password', { token, body: { currentPassword, newPassword } });

  it('changes the password: the caller gets a new token, every earlier token stops working, and only the new password signs in', async () => {
    const other = (await login(OWNER_PASSWORD)).body.token;
    const res = await change(token, OWNER_PASSWORD, 'a new long password');
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body).to.have.keys('token', 'expiresAt');

    for (const old of [token, other]) {
      const refused = await app.request('GET', '/api/settings', { token: old });
      expect(refused.status).to.equal(401);
      expect(refused.body.message).to.equal('this session ended when the password was changed: sign in again');
    }
    expect((await app.request('GET', '/api/settings', { token: res.body.token })).status).to.equal(200);
    expect((await login(OWNER_PASSWORD)).status).to.equal(401);
    expect((await login('a new long password')).status).to.equal(200);

    const audit = await eventually(
      () => app.request('GET', '/api/audit?limit=10', { token: res.body.token }),
      (r) => r.body.items?.some((i: any) => i.action === 'user.password_changed'),
    );
    expect(audit.body.items.find((i: any) => i.action === 'user.password_changed').actor).to.include({ type: 'user', email: ownerEmail });
  });

  it('refuses a wrong current password with a 403 that counts as a failed sign-in, and changes nothing', async () => {
    const wrong = await change(token, 'not-the-password', 'a new long password');
    expect(wrong.status).to.equal(403);
    expect(wrong.body).to.deep.equal({ message: 'currentPassword: this is not your current password', error: 'Forbidden', statusCode: 403 });
    expect((await app.request('GET', '/api/settings', { token })).status).to.equal(200);

    // three failures in a row for the account from this address: the next attempt is throttled, right or wrong
    await change(token, 'not-the-password', 'a new long password');
    await change(token, 'not-the-password', 'a new long password');
    const throttled = await change(token, OWNER_PASSWORD, 'a new long password');
    expect(throttled.status).to.equal(429);
    expect(throttled.headers.get('retry-after')).to.match(/^\d+$/);
    expect((await login(OWNER_PASSWORD)).status).to.equal(429);
    expect((await app.request('GET', '/api/settings', { token })).status).to.equal(200);
  });

  it('refuses a new password under 8 characters, naming the field', async () => {
    const res = await change(token, OWNER_PASSWORD, 'short');
    expect(res.status).to.equal(400);
    expect(res.body.message).to.equal('newPassword: must be at least 8 characters');
    expect((await login(OWNER_PASSWORD)).status).to.equal(200);
  });

  it("a dashboard session (cookie) is renewed in its cookies, and the token is not put where the page's scripts can read it", async () => {
    const signIn = await fetch(`${app.baseUrl}/api/auth/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: ownerEmail, password: OWNER_PASSWORD }),
    });
    const cookies = (res: Response) => Object.fromEntries(res.headers.getSetCookie().map((c) => c.split(';')[0].split('=') as [string, string]));
    const before = cookies(signIn);
    const asDashboard = (jar: Record<string, string>, init: RequestInit = {}) =>
      fetch(`${app.baseUrl}${init.method === 'POST' ? '/api/auth/password' : '/api/settings'}`, {
        ...init,
        headers: { cookie: `cl_session=${jar.cl_session}; cl_csrf=${jar.cl_csrf}`, 'x-csrf-token': jar.cl_csrf, 'content-type': 'application/json' },
      });
    const res = await asDashboard(before, { method: 'POST', body: JSON.stringify({ currentPassword: OWNER_PASSWORD, newPassword: 'a new long password' }) });
    expect(res.status).to.equal(200);
    expect(Object.keys(await res.json())).to.deep.equal(['expiresAt']);
    const after = cookies(res);
    expect(after.cl_session).to.be.a('string').and.not.equal(before.cl_session);
    expect((await asDashboard(before)).status).to.equal(401);
    expect((await asDashboard(after)).status).to.equal(200);
  });

  it("an operator's reset from the command line ends the sessions too", async () => {
    await resetPassword({ eventStore: app.infra.eventStore }, ownerEmail, 'cli');
    const refused = await eventually(
      () => app.request('GET', '/api/settings', { token }),
      (r) => r.status !== 200,
    );
    expect(refused.status).to.equal(401);
  });

  it('refuses a token signed before sessions carried their password (no stamp): its user signs in again', async () => {
    const secret = (await app.infra.db('service_secrets').where({ name: 'jwt' }).first('value')).value as string;
    const session = (await app.request('GET', '/api/auth/session', { token })).body;
    const unstamped = await new SignJWT({ acc: session.accountId })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(session.userId)
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(secret));
    expect((await app.request('GET', '/api/settings', { token: unstamped })).status).to.equal(401);
  });
});
