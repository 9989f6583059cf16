import { expect } from 'chai';
import { eventually } from '../support/email-setup.js';
import { expectAccessible, screenshot, startDashboard, type DashboardHarness } from '../support/browser.js';
import { hookRequests, startScriptedReceiver, type ScriptedReceiver } from '../support/webhook-receiver.js';

describe('dashboard: domains and webhooks', function () {
  this.timeout(60_000);
  let h: DashboardHarness;
  let receiver: ScriptedReceiver;
  before(async () => {
    // a failing delivery gives up after three quick attempts
    h = await startDashboard({ WEBHOOK_RETRY_DELAYS_MS: '50,50' });
    receiver = await startScriptedReceiver([200]);
  });
  after(async () => {
    await receiver?.close();
    await h?.close();
  });

  it('adds a domain, shows the DNS records to publish with copy buttons, and verifies it', async () => {
    const { page } = h;
    await page.goto('/domains');
    await page.getByLabel('Domain', { exact: true }).fill('mail.example.org');
    await page.getByRole('button', { name: 'Add domain' }).click();
    const records = page.getByRole('table', { name: 'DNS records to publish for mail.example.org' });
    await records.waitFor();
    expect(await records.getByRole('row').count()).to.equal(4);
    await records.getByText('sandbox._domainkey.mail.example.org', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Copy CNAME name sandbox._domainkey.mail.example.org' }).waitFor();
    await page.getByRole('button', { name: 'Verify mail.example.org' }).click();
    await page.getByRole('heading', { name: /mail\.example\.org verified/ }).waitFor();
    const api = await h.app.request('GET', '/api/domains', { token: h.app.adminToken });
    expect(api.body.items.map((d: { domain: string; verified: boolean }) => [d.domain, d.verified])).to.deep.equal([['mail.example.org', true]]);
    await expectAccessible(page);
    await screenshot(page, 'domains');
  });

  it('an error from the API is shown next to the form that caused it', async () => {
    const { page } = h;
    await page.goto('/domains');
    await page.getByLabel('Domain', { exact: true }).fill('mail.example.org');
    await page.getByRole('button', { name: 'Add domain' }).click();
    await page.getByRole('alert').filter({ hasText: 'mail.example.org already exists' }).waitFor();
  });

  it('removes a domain and a single sender after asking, and they are gone from the page and the API', async () => {
    const { page } = h;
    await page.goto('/domains');
    await page.getByLabel('Domain', { exact: true }).fill('old.example.org');
    await page.getByRole('button', { name: 'Add domain' }).click();
    await page.getByRole('heading', { name: /old\.example\.org/ }).waitFor();
    await page.getByLabel('Sender email').fill('me@old.example.net');
    await page.getByRole('button', { name: 'Add sender' }).click();
    await page.getByRole('button', { name: 'Verify me@old.example.net' }).or(page.getByRole('alert')).first().waitFor();
    expect(await page.getByRole('alert').count(), await page.getByRole('alert').allTextContents().then((t) => t.join('; '))).to.equal(0);

    await page.getByRole('button', { name: 'Remove old.example.org' }).click();
    await page.getByRole('button', { name: 'Yes, remove old.example.org' }).waitFor();
    await screenshot(page, 'domains-remove-confirm');
    await page.getByRole('button', { name: 'Yes, remove old.example.org' }).click();
    await page.getByRole('heading', { name: /old\.example\.org/ }).waitFor({ state: 'detached' });
    // stepping back removes nothing
    await page.getByRole('button', { name: 'Remove me@old.example.net' }).click();
    await page.getByRole('button', { name: 'Cancel and keep me@old.example.net', exact: true }).click();
    await page.getByRole('button', { name: 'Remove me@old.example.net' }).click();
    await page.getByRole('button', { name: 'Yes, remove me@old.example.net' }).click();
    await page.getByRole('button', { name: 'Verify me@old.example.net' }).waitFor({ state: 'detached' });

    const token = { token: h.app.adminToken };
    expect((await h.app.request('GET', '/api/domains', token)).body.items.map((d: { domain: string }) => d.domain)).to.deep.equal(['mail.example.org']);
    expect((await h.app.request('GET', '/api/senders', token)).body.items).to.deep.equal([]);
    await page.getByRole('heading', { name: /mail\.example\.org verified/ }).waitFor();
    await expectAccessible(page);
  });

  it('adds an endpoint, reveals the same secret as the API and Test shows the receiver answer', async () => {
    const { page } = h;
    await page.goto('/webhooks');
    await page.getByLabel('URL').fill(receiver.hook);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('heading', { name: receiver.hook }).waitFor();
    await page.getByRole('button', { name: `Reveal secret ${receiver.hook}` }).click();
    const shown = await page.getByTestId('secret').textContent();
    const api = await h.app.request('GET', '/api/webhooks', { token: h.app.adminToken });
    const revealed = await h.app.request('POST', `/api/webhooks/${api.body.items[0].id}/reveal-secret`, { token: h.app.adminToken });
    expect(shown).to.equal(revealed.body.secret);
    await page.getByRole('button', { name: `Test ${receiver.hook}` }).click();
    await page.getByText('Delivered: the endpoint answered 200').waitFor();
    expect(hookRequests(receiver)).to.have.length(1);
    await expectAccessible(page);
    await screenshot(page, 'webhooks-test');
  });

  it("a failing endpoint's delivery shows as failed and Retry from the page delivers it", async () => {
    const { page } = h;
    receiver.script([500]);
    const suppressed = await h.app.request('POST', '/api/suppressions', { token: h.app.adminToken, body: { email: 'gone@example.com' } });
    expect(suppressed.status).to.equal(201);
    const hook = (await h.app.request('GET', '/api/webhooks', { token: h.app.adminToken })).body.items[0];
    await eventually(
      () => h.app.request('GET', `/api/webhooks/${hook.id}/deliveries`, { token: h.app.adminToken }),
      (r) => r.body.items.some((d: { event: string; status: string }) => d.event === 'contact.suppressed' && d.status === 'failed'),
    );
    await page.goto('/webhooks');
    await page.getByRole('button', { name: `Deliveries ${receiver.hook}` }).click();
    const row = page.getByRole('row').filter({ hasText: 'contact.suppressed' });
    await row.getByText('failed').waitFor();
    expect(await row.getByRole('cell').nth(2).textContent()).to.equal('3');
    expect(await row.getByRole('cell').nth(3).textContent()).to.match(/^500/);
    await screenshot(page, 'webhooks-failed-delivery');
    receiver.script([200]);
    await row.getByRole('button', { name: /^Retry/ }).click();
    await eventually(
      () => h.app.request('GET', `/api/webhooks/${hook.id}/deliveries`, { token: h.app.adminToken }),
      (r) => r.body.items.some((d: { event: string; status: string }) => d.event === 'contact.suppressed' && d.status === 'delivered'),
    );
    await page.getByRole('button', { name: `Refresh deliveries of ${receiver.hook}` }).click();
    await row.getByText('delivered').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'webhooks-retried');
  });

  it('rotates the secret to sign from an hour ahead after asking, shows the new one, and Reveal then shows both', async () => {
    const { page } = h;
    await page.goto('/webhooks');
    const hook = (await h.app.request('GET', '/api/webhooks', { token: h.app.adminToken })).body.items[0];
    await page.getByLabel('New secret signs').selectOption({ label: 'in 1 hour' });
    await page.getByRole('button', { name: `Rotate secret ${receiver.hook}` }).click();
    await page.getByText('Until then the current secret signs: let your receiver accept both.').waitFor();
    await page.getByRole('button', { name: `Yes, rotate ${receiver.hook}` }).click();
    const fresh = await page.getByTestId('new-secret').textContent();
    expect(fresh).to.match(/^whsec_/).and.not.equal(hook.secret);
    await expectAccessible(page);
    await screenshot(page, 'webhooks-rotated');
    const listed = (await h.app.request('GET', '/api/webhooks', { token: h.app.adminToken })).body.items[0];
    expect(listed).to.include({ secret: hook.secret, nextSecret: fresh });
    expect(Date.parse(listed.nextSecretAt) - Date.now()).to.be.within(3_000_000, 3_600_000);
    await page.getByRole('button', { name: `Reveal secret ${receiver.hook}` }).click();
    expect(await page.getByTestId('secret').textContent()).to.equal(hook.secret);
    expect(await page.getByTestId('next-secret').textContent()).to.equal(fresh);
  });

  it('deletes an endpoint after confirmation', async () => {
    const { page } = h;
    await page.goto('/webhooks');
    await page.getByRole('button', { name: `Delete ${receiver.hook}` }).click();
    await page.getByRole('button', { name: `Confirm delete ${receiver.hook}` }).click();
    await page.getByText('No endpoints yet.').waitFor();
    expect((await h.app.request('GET', '/api/webhooks', { token: h.app.adminToken })).body.items).to.deep.equal([]);
  });
});
