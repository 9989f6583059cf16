import { expect } from 'chai';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestApp, type TestApp } from '../support/app.js';

/** Served under an https BASE_URL (behind a TLS proxy), the dashboard's cookies never go over plain HTTP. */
describe('POST /api/auth/session under an https BASE_URL', function () {
  this.timeout(30_000);
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ BASE_URL: 'https://mail.example.com' });
  });
  after(async () => app?.close());

  it('sets the session and CSRF cookies Secure, and clears them the same way', async () => {
    const signIn = await app.request('POST', '/api/auth/session', { headers: { origin: 'https://mail.example.com' }, body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    expect(signIn.status, JSON.stringify(signIn.body)).to.equal(200);
    const set = signIn.headers.getSetCookie();
    expect(set).to.have.lengthOf(2);
    for (const cookie of set) expect(cookie.split(/;\s*/), cookie).to.include('Secure');
    const out = await app.request('DELETE', '/api/auth/session', { headers: { origin: 'https://mail.example.com' } });
    expect(out.status).to.equal(204);
    for (const cookie of out.headers.getSetCookie()) expect(cookie.split(/;\s*/), cookie).to.include('Secure');
  });
});
