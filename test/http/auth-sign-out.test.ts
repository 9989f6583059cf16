import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually } from '../support/email-setup.js';

/**
 * Signing out ends the session on the server, not only in the browser: its token (kept in a log, a
 * stolen cookie, a shared computer) is refused from then on, by every process; other sessions of the
 * same user go on.
 */
describe('DELETE /api/auth/session: signing out', function () {
  this.timeout(60_000);
  let app: TestApp;
  const EMAIL = 'owner@sign-out.example';
  const PASSWORD = 'a long enough password';
  before(async () => {
    app = await startTestApp();
    const signup = await app.request('POST', '/api/auth/signup', { body: { accountName: 'Sign-out', email: EMAIL, password: PASSWORD } });
    expect(signup.status, JSON.stringify(signup.body)).to.equal(201);
  });
  after(async () => app?.close());

  /** A dashboard sign-in's cookies, and requests made with them as the dashboard makes them. */
  async function signIn() {
    const res = await app.request('POST', '/api/auth/session', { body: { email: EMAIL, password: PASSWORD } });
    expect(res.status).to.equal(200);
    const jar = Object.fromEntries(res.headers.getSetCookie().map((c) => c.split(';')[0].split('=') as [string, string]));
    const headers = { cookie: `cl_session=${jar.cl_session}; cl_csrf=${jar.cl_csrf}`, 'x-csrf-token': jar.cl_csrf };
    return { token: jar.cl_session, as: (method: string, path: string) => app.request(method, path, { headers }) };
  }

  it("refuses the signed-out session's cookie and its token as a bearer, with its reason; another session of the user goes on", async () => {
    const ended = await signIn();
    const other = await signIn();
    expect((await ended.as('GET', '/api/settings')).status).to.equal(200);
    const out = await ended.as('DELETE', '/api/auth/session');
    expect(out.status).to.equal(204);
    // cleared in the browser as before
    expect(out.headers.getSetCookie().some((c) => c.startsWith('cl_session=;'))).to.equal(true);

    const refused = await ended.as('GET', '/api/settings');
    expect(refused.status).to.equal(401);
    expect(refused.body.message).to.equal('this session was signed out: sign in again');
    expect((await app.request('GET', '/api/auth/session', { token: ended.token })).status).to.equal(401);
    expect((await other.as('GET', '/api/settings')).status).to.equal(200);
  });

  it('signs out a bearer token (POST /api/auth/login) the same way; signing out twice, or with nothing, answers 204', async () => {
    const { token } = (await app.request('POST', '/api/auth/login', { body: { email: EMAIL, password: PASSWORD } })).body;
    expect((await app.request('GET', '/api/settings', { token })).status).to.equal(200);
    expect((await app.request('DELETE', '/api/auth/session', { token })).status).to.equal(204);
    expect((await app.request('GET', '/api/settings', { token })).status).to.equal(401);
    expect((await app.request('DELETE', '/api/auth/session', { token })).status).to.equal(204);
    expect((await app.request('DELETE', '/api/auth/session', {})).status).to.equal(204);
    expect((await app.request('DELETE', '/api/auth/session', { token: 'not-a-token' })).status).to.equal(204);
  });

  it('is in the audit trail as user.signed_out, once per session', async () => {
    const session = await signIn();
    await session.as('DELETE', '/api/auth/session');
    const { token } = (await app.request('POST', '/api/auth/login', { body: { email: EMAIL, password: PASSWORD } })).body;
    const audit = await eventually(
      () => app.request('GET', '/api/audit?limit=50', { token }),
      (r) => r.body.items?.filter((i: { action: string }) => i.action === 'user.signed_out').length === 3,
    );
    const entry = audit.body.items.find((i: { action: string }) => i.action === 'user.signed_out');
    expect(entry).to.deep.include({ action: 'user.signed_out', target: { type: 'user', id: entry.actor.id } });
    expect(entry.actor.type).to.equal('user');
  });
});
