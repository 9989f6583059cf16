import { expect } from 'chai';
import { ADMIN_EMAIL, ADMIN_PASSWORD } from '../support/app.js';
import { eventually } from '../support/email-setup.js';
import { expectAccessible, screenshot, signIn, startDashboard, type DashboardHarness } from '../support/browser.js';

describe('dashboard: session', function () {
  this.timeout(60_000);
  let h: DashboardHarness;
  before(async () => {
    h = await startDashboard();
  });
  after(async () => h?.close());

  it('a wrong password shows the error beside the form and sets no session', async () => {
    const page = await h.newPage();
    await signIn(page, 'not-the-password');
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).to.equal('invalid email or password');
    expect(new URL(page.url()).pathname).to.equal('/login');
    expect((await page.context().cookies()).map((c) => c.name)).to.not.include('cl_session');
    await expectAccessible(page);
    await screenshot(page, 'login-wrong-password');
    await page.context().close();
  });

  it('signing in sets an HttpOnly, SameSite=Lax session cookie, never localStorage, and / leads to /messages', async () => {
    const page = await h.newPage();
    await signIn(page);
    const session = (await page.context().cookies()).find((c) => c.name === 'cl_session')!;
    expect(session.httpOnly).to.equal(true);
    expect(session.sameSite).to.equal('Lax');
    expect(session.secure).to.equal(false);
    expect(await page.evaluate(() => JSON.stringify(localStorage) + JSON.stringify(sessionStorage))).to.equal('{}{}');
    await page.goto('/');
    await page.waitForURL('**/messages');
    await page.getByRole('heading', { name: 'Messages', level: 1 }).waitFor();
    await page.context().close();
  });

  it('signs in and moves between pages with the keyboard alone', async () => {
    const page = await h.newPage();
    await page.goto('/login');
    await page.keyboard.press('Tab');
    await page.keyboard.type(ADMIN_EMAIL);
    await page.keyboard.press('Tab');
    await page.keyboard.type(ADMIN_PASSWORD);
    await page.keyboard.press('Enter');
    await page.waitForURL('**/messages');
    // focus lands on the page's heading
    await eventually(() => page.evaluate(() => `${document.activeElement?.tagName} ${document.activeElement?.textContent}`), (t) => t === 'H1 Messages');
    // on a fresh load the skip link comes first, then the navigation
    await page.reload();
    await page.getByRole('heading', { name: 'Messages', level: 1 }).waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).to.equal('Skip to content');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).to.equal('Templates');
    await page.keyboard.press('Enter');
    await page.waitForURL('**/templates');
    // focus moves to the new page's heading; the next Tab is the page's first control
    await eventually(() => page.evaluate(() => document.activeElement?.textContent), (t) => t === 'Templates');
    expect(await page.evaluate(() => document.activeElement?.tagName)).to.equal('H1');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).to.equal('New template');
    await page.context().close();
  });

  it('signed out, a page sends the person to /login and back to it afterwards', async () => {
    const page = await h.newPage();
    await page.goto('/webhooks?x=1');
    await page.waitForURL('**/login?next=**');
    expect(new URL(page.url()).searchParams.get('next')).to.equal('/webhooks?x=1');
    await page.getByLabel('Email').fill(ADMIN_EMAIL);
    await page.getByLabel('Password').fill(ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((u) => u.pathname === '/webhooks' && u.search === '?x=1');
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    await page.context().close();
  });

  it('signed out, a page that loads several things at once (a list and its chart) comes back the same', async () => {
    const page = await h.newPage();
    await page.goto('/messages?status=sent');
    await page.waitForURL('**/login?next=**');
    // every one of its requests has been answered 401 by now; none may send the sign-in page to itself
    await page.waitForLoadState('networkidle');
    expect(new URL(page.url()).searchParams.get('next')).to.equal('/messages?status=sent');
    await page.getByLabel('Email').fill(ADMIN_EMAIL);
    await page.getByLabel('Password').fill(ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((u) => u.pathname === '/messages' && u.search === '?status=sent');
    await page.context().close();
  });

  it('an expired session (cookie no longer valid) returns to /login with the page to come back to', async () => {
    const page = await h.newPage();
    await signIn(page);
    const url = new URL(h.app.baseUrl);
    await page.context().addCookies([{ name: 'cl_session', value: 'expired.token.value', domain: url.hostname, path: '/', httpOnly: true, sameSite: 'Lax' }]);
    await page.goto('/domains');
    await page.waitForURL('**/login?next=%2Fdomains');
    await page.context().close();
  });

  it('Sign out clears the session', async () => {
    const page = await h.newPage();
    await signIn(page);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/login');
    expect((await page.context().cookies()).find((c) => c.name === 'cl_session')).to.equal(undefined);
    const res = await page.request.get('/api/webhooks');
    expect(res.status()).to.equal(401);
    await page.context().close();
  });

  it('the cookie authenticates admin endpoints only with the CSRF header on a state-changing request', async () => {
    const cookies = await h.page.context().cookies();
    const cookie = cookies.map((c) => `${c.name}=${c.value}`).join('; ');
    const csrf = cookies.find((c) => c.name === 'cl_csrf')!.value;
    const get = await fetch(`${h.app.baseUrl}/api/webhooks`, { headers: { cookie } });
    expect(get.status).to.equal(200);
    const body = JSON.stringify({ url: 'http://127.0.0.1:9/x' });
    const forged = await fetch(`${h.app.baseUrl}/api/webhooks`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body });
    expect(forged.status).to.equal(403);
    expect((await forged.json()).message).to.match(/CSRF/);
    const wrong = await fetch(`${h.app.baseUrl}/api/webhooks`, { method: 'POST', headers: { cookie, 'content-type': 'application/json', 'x-csrf-token': 'guess' }, body });
    expect(wrong.status).to.equal(403);
    const ok = await fetch(`${h.app.baseUrl}/api/webhooks`, { method: 'POST', headers: { cookie, 'content-type': 'application/json', 'x-csrf-token': csrf }, body });
    expect(ok.status).to.equal(201);
    // signing in from another site's page is refused
    const login = JSON.stringify({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
    const crossSite = await fetch(`${h.app.baseUrl}/api/auth/session`, { method: 'POST', headers: { origin: 'https://evil.example', 'content-type': 'text/plain' }, body: login });
    expect(crossSite.status).to.equal(403);
    expect(crossSite.headers.get('set-cookie')).to.equal(null);
    // a JWT in Authorization keeps working, with no CSRF header (it is not sent by the browser on its own)
    const jwt = await h.app.request('GET', '/api/webhooks', { token: h.app.adminToken });
    expect(jwt.status).to.equal(200);
  });

  it('pages carry a Content-Security-Policy without inline scripts, and unknown paths stay JSON 404s', async () => {
    const res = await fetch(`${h.app.baseUrl}/messages`);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).to.match(/script-src 'self'(;|$)/);
    expect(csp).to.not.match(/script-src[^;]*unsafe-inline/);
    const html = await res.text();
    expect(html).to.not.match(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).to.not.match(/https?:\/\//);
    const missing = await fetch(`${h.app.baseUrl}/nope`);
    expect(missing.status).to.equal(404);
    expect(await missing.json()).to.deep.equal({ message: 'Not Found', error: 'Not Found', statusCode: 404 });
  });
});
