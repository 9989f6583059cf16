import { expect } from 'chai';
import { ADMIN_EMAIL } from '../support/app.js';
import { eventually } from '../support/email-setup.js';
import { expectAccessible, screenshot, startDashboard, type DashboardHarness } from '../support/browser.js';

describe('dashboard: audit trail', function () {
  this.timeout(60_000);
  let h: DashboardHarness;
  before(async () => {
    h = await startDashboard();
  });
  after(async () => h?.close());

  it("lists the account's admin actions newest first: who, from where, what, and the change from → to", async () => {
    const { app, page } = h;
    const from = { 'x-forwarded-for': '203.0.113.9' };
    // long tokens that must wrap inside the page: a contact's target (its keyed hash) beside a key's id
    // as the actor, and below, a JSON list of every scope without a space
    const importer = await app.request('POST', '/api/api-keys', { token: app.adminToken, body: { name: 'importer', scopes: ['contacts:write'] } });
    expect((await app.request('POST', '/api/contacts', { apiKey: importer.body.key, body: { email: 'audited@example.org' } })).status).to.equal(201);
    const scopes = ['send', 'sms:send', 'read_events', 'contacts:read', 'contacts:write'];
    const key = await app.request('POST', '/api/api-keys', { token: app.adminToken, headers: from, body: { name: 'ci', scopes } });
    expect(key.status).to.equal(201);
    expect((await app.request('PATCH', '/api/settings', { token: app.adminToken, headers: from, body: { dailySendCap: 4000 } })).status).to.equal(200);
    // the trail is a read model: wait until it has caught up
    await eventually(
      () => app.request('GET', '/api/audit', { token: app.adminToken }),
      (r) => r.body.items?.[0]?.action === 'settings.changed',
    );

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit' }).click();
    await page.getByRole('heading', { name: 'Audit trail' }).waitFor();
    const rows = page.getByRole('row');
    const settings = rows.filter({ hasText: 'settings.changed' });
    await settings.waitFor();
    const cells = await settings.getByRole('cell').allTextContents();
    expect(cells.slice(1)).to.deep.equal([`${ADMIN_EMAIL} (user)`, '203.0.113.9', 'settings.changed', 'account default', 'dailySendCap: 1000 → 4000']);
    const created = await rows.filter({ hasText: 'api_key.created' }).getByRole('cell').allTextContents();
    expect(created.slice(1, 5)).to.deep.equal([`${ADMIN_EMAIL} (user)`, '203.0.113.9', 'api_key.created', `api_key ${key.body.id}`]);
    // newest first: the header row, then the settings change, then the key
    expect(await rows.nth(1).textContent()).to.include('settings.changed');
    expect(await rows.nth(2).textContent()).to.include('api_key.created');
    expect(await page.getByText(key.body.key).count()).to.equal(0);
    // nothing runs past the page's right edge
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).to.equal(0);
    await expectAccessible(page);
    await screenshot(page, 'audit');
  });

  it('pages with Next page, the cursor in the URL, back to the first page', async () => {
    const { app, page } = h;
    // 25 entries a page: enough actions that the oldest, the harness's own sign-ins, fall onto a later page
    for (let i = 0; i < 26; i++) {
      expect((await app.request('PATCH', '/api/settings', { token: app.adminToken, body: { dailySendCap: 5000 + i } })).status).to.equal(200);
    }
    await eventually(
      () => app.request('GET', '/api/audit', { token: app.adminToken }),
      (r) => r.body.items?.[0]?.changes?.dailySendCap?.to === 5025,
    );
    await page.goto('/audit');
    await page.getByRole('cell', { name: 'dailySendCap: 5024 → 5025' }).waitFor();
    expect(await page.getByRole('cell', { name: 'user.signed_in', exact: true }).count()).to.equal(0);

    await page.getByRole('link', { name: 'Next page' }).click();
    await page.waitForURL((u) => u.pathname === '/audit' && !!u.searchParams.get('cursor'));
    await page.getByRole('cell', { name: 'user.signed_in', exact: true }).first().waitFor();
    expect(await page.getByRole('cell', { name: 'dailySendCap: 5024 → 5025' }).count()).to.equal(0);
    // the URL alone shows the same page
    await page.reload();
    await page.getByRole('cell', { name: 'user.signed_in', exact: true }).first().waitFor();

    await page.getByRole('link', { name: 'First page' }).click();
    await page.getByRole('cell', { name: 'dailySendCap: 5024 → 5025' }).waitFor();
  });

  it('narrows the trail to what one key did, or what was done to one thing, by a click; the form says what it is filtered by', async () => {
    const { app, page } = h;
    const importer = (await app.request('GET', '/api/api-keys', { token: app.adminToken })).body.items.find((k: any) => k.name === 'importer');
    await page.goto('/audit?action=api_key.*');
    const created = page.getByRole('row').filter({ hasText: 'api_key.created' });
    await created.first().waitFor();
    expect(await page.getByRole('cell', { name: 'settings.changed', exact: true }).count()).to.equal(0);
    expect(await page.getByLabel('Action').inputValue()).to.equal('api_key.*');

    // the importer key's row: its target link shows only what was done to that key
    await created.filter({ hasText: importer.id }).getByRole('link', { name: importer.id }).click();
    await page.waitForURL((u) => u.searchParams.get('target') === importer.id);
    expect(await page.getByLabel('Target').inputValue()).to.equal(importer.id);
    await page.getByRole('cell', { name: `api_key ${importer.id}` }).waitFor();

    // what the key itself did: the actor link of its contact.created
    await page.goto('/audit?action=contact.*');
    await page.getByRole('row').filter({ hasText: 'contact.created' }).getByRole('link', { name: `${importer.id} (API key)` }).click();
    await page.waitForURL((u) => u.searchParams.get('actor') === importer.id && u.searchParams.get('action') === 'contact.*');
    expect(await page.getByRole('cell', { name: 'contact.created', exact: true }).count()).to.equal(1);
    await expectAccessible(page);
    await screenshot(page, 'audit-filtered');

    // a day with nothing in it, by the date inputs
    await page.getByRole('link', { name: 'Clear filters' }).click();
    // the form is reset when the page has moved to the unfiltered trail: fill it only then
    await page.waitForURL((u) => u.search === '');
    await eventually(() => page.getByLabel('Action').inputValue(), (v) => v === '');
    await page.getByLabel('From').fill('2020-01-01');
    await page.getByLabel('To').fill('2020-01-31');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL((u) => u.searchParams.get('from') === '2020-01-01' && u.searchParams.get('to') === '2020-01-31');
    await page.getByText('Nothing recorded matches these filters.').waitFor();
  });

  it("shows the API's refusal in words", async () => {
    const { page } = h;
    await page.goto('/audit?cursor=not-a-cursor');
    await page.getByRole('alert').filter({ hasText: 'cursor is invalid' }).waitFor();
  });
});
