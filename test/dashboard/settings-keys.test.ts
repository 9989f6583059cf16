import { expect } from 'chai';
import { withoutAwsCredentials } from '../support/aws-credentials.js';
import { eventually } from '../support/email-setup.js';
import { ORIGINATION } from '../support/sms-setup.js';
import { expectAccessible, screenshot, startDashboard, type DashboardHarness } from '../support/browser.js';

describe('dashboard: settings and API keys', function () {
  this.timeout(60_000);
  let h: DashboardHarness;
  before(async () => {
    h = await startDashboard();
  });
  after(async () => h?.close());
  const api = (method: string, path: string, body?: unknown) => h.app.request(method, path, { token: h.app.adminToken, body });

  it('saves the account settings', async () => {
    const { page } = h;
    await page.goto('/settings');
    await page.getByLabel('Daily send cap').waitFor();
    // the page's three settings by the names people call them: one control each
    for (const name of ['Provider', 'Tracking', 'Daily send cap']) expect(await page.getByLabel(name).count(), name).to.equal(1);
    await page.getByLabel('Tracking').selectOption('none');
    await page.getByLabel('Daily send cap').fill('500');
    await page.getByLabel('Sends per second at most').fill('14');
    await page.getByLabel('Keep message content for (days)').fill('30');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    const api = await h.app.request('GET', '/api/settings', { token: h.app.adminToken });
    expect(api.body).to.deep.include({ tracking: 'none', dailySendCap: 500, providerRatePerSecond: 14, retentionDays: 30 });
    await expectAccessible(page);
    await screenshot(page, 'settings');

    // emptied, each is unset again: no limit, content kept
    await page.getByLabel('Sends per second at most').fill('');
    await page.getByLabel('Keep message content for (days)').fill('');
    await page.getByRole('button', { name: 'Save' }).click();
    // the first save's "Saved." may still be on the page: the account itself says when this one is done
    const unset = await eventually(
      () => h.app.request('GET', '/api/settings', { token: h.app.adminToken }),
      (r) => r.body.providerRatePerSecond === null,
    );
    expect(unset.body).not.to.have.property('retentionDays');

    // a rate below one a second is a message every so many seconds; 0 is no rate, and the API says so
    await page.getByLabel('Sends per second at most').fill('0.005');
    await page.getByRole('button', { name: 'Save' }).click();
    await eventually(() => h.app.request('GET', '/api/settings', { token: h.app.adminToken }), (r) => r.body.providerRatePerSecond === 0.005);
    await page.getByLabel('Sends per second at most').fill('0');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('alert').filter({ hasText: 'providerRatePerSecond' }).waitFor();
    await screenshot(page, 'settings-rate-zero');
    expect((await h.app.request('GET', '/api/settings', { token: h.app.adminToken })).body.providerRatePerSecond).to.equal(0.005);
  });

  it('warns, before anything is sent, that a provider this server has no credentials for will fail', async () => {
    const restore = withoutAwsCredentials();
    try {
      const { page } = h;
      await page.goto('/settings');
      await page.getByLabel('Email provider').selectOption('ses');
      await page.getByRole('note').filter({ hasText: /^Email through this provider will fail: no AWS credentials were found on this server/ }).waitFor();
      await screenshot(page, 'settings-ses-without-credentials');
      await page.getByLabel('Email provider').selectOption('sandbox');
      await page.getByRole('note').waitFor({ state: 'detached' });
    } finally {
      restore();
    }
  });

  it('saves the SMS settings and syncs opt-outs now, showing synced and total', async () => {
    const { page } = h;
    await h.app.infra.db('sandbox_sms_optouts').insert([{ phone_number: '+14155552673' }, { phone_number: '+14155552674' }]);
    await page.goto('/settings/sms');
    await page.getByRole('checkbox', { name: 'Enabled' }).check();
    await page.getByLabel('Origination number').fill(ORIGINATION);
    await page.getByRole('checkbox', { name: 'Sandbox' }).check();
    await page.getByLabel('Sandbox destinations').fill('+14155552671, +14155552672');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    const api = await h.app.request('GET', '/api/settings/sms', { token: h.app.adminToken });
    expect(api.body).to.deep.equal({ enabled: true, originationNumber: ORIGINATION, sandbox: true, sandboxDestinations: ['+14155552671', '+14155552672'] });
    await page.getByRole('button', { name: 'Sync opt-outs now' }).click();
    await page.getByText('2 synced, 2 total').waitFor();
    const suppressed = await h.app.request('GET', '/api/suppressions', { token: h.app.adminToken });
    expect(suppressed.body.items.map((s: { phone: string }) => s.phone).sort()).to.deep.equal(['+14155552673', '+14155552674']);
    await expectAccessible(page);
    await screenshot(page, 'settings-sms');
  });

  it('an invalid origination number is refused in words next to the form', async () => {
    const { page } = h;
    await page.goto('/settings/sms');
    await page.getByLabel('Origination number').fill('not a number');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('alert').filter({ hasText: 'not a valid phone number' }).waitFor();
  });

  it('creates a key with every control, shows its secret once, and a revoked key then gets 401', async () => {
    const { page } = h;
    await page.goto('/api-keys');
    await page.getByLabel('Name').fill('billing');
    await page.getByRole('checkbox', { name: 'send', exact: true }).uncheck();
    await page.getByRole('checkbox', { name: 'read_events' }).check();
    await page.getByLabel('Expires at').fill('2099-01-01T12:00');
    await page.getByLabel('IP allowlist').fill('127.0.0.1, ::1, ::ffff:127.0.0.1');
    await page.getByLabel('Daily limit').fill('50');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.getByTestId('new-key').textContent())!;
    await page.getByRole('button', { name: 'Copy the new key' }).waitFor();
    const listed = (await h.app.request('GET', '/api/api-keys', { token: h.app.adminToken })).body.items[0];
    expect(listed).to.deep.include({ name: 'billing', scopes: ['read_events'], dailyLimit: 50 });
    expect(listed.expiresAt.slice(0, 4)).to.equal('2099');
    expect((await h.app.request('GET', '/api/messages', { apiKey: secret })).status).to.equal(200);
    await screenshot(page, 'api-keys-created');

    // shown once: a reload no longer has it
    await page.reload();
    await page.getByRole('cell', { name: 'billing', exact: true }).waitFor();
    expect(await page.getByText(secret).count()).to.equal(0);
    await page.getByRole('row').filter({ hasText: 'billing' }).getByRole('cell').nth(3).filter({ hasNotText: 'never' }).waitFor();
    // the controls it was made with stay visible
    expect(await page.getByRole('row').filter({ hasText: 'billing' }).getByRole('cell').nth(5).textContent()).to.equal(`from ${listed.ipAllowlist.join(', ')}; 50 sends a day`);

    await page.getByRole('button', { name: 'Revoke billing' }).click();
    await page.getByRole('button', { name: 'Yes, revoke billing' }).click();
    await page.getByText(/^revoked/).waitFor();
    expect((await h.app.request('GET', '/api/messages', { apiKey: secret })).status).to.equal(401);
    await expectAccessible(page);
    await screenshot(page, 'api-keys-revoked');
  });

  it('after a key is created the whole form is blank again: the next key gets none of its scopes, expiry or limits', async () => {
    const { page } = h;
    await page.goto('/api-keys');
    await page.getByLabel('Name').fill('reporting');
    await page.getByRole('checkbox', { name: 'send', exact: true }).uncheck();
    await page.getByRole('checkbox', { name: 'read_events' }).check();
    await page.getByRole('checkbox', { name: 'contacts:read' }).check();
    await page.getByLabel('Expires at').fill('2099-01-01T12:00');
    await page.getByLabel('IP allowlist').fill('127.0.0.1');
    await page.getByLabel('Daily limit').fill('50');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('status').filter({ hasText: 'The secret of reporting' }).waitFor();
    // as the page first showed it: a name to type, the one default scope, no expiry, no limits
    expect(await page.getByLabel('Name').inputValue()).to.equal('');
    const checked: string[] = [];
    for (const box of await page.getByRole('group', { name: 'Scopes' }).getByRole('checkbox').all()) if (await box.isChecked()) checked.push((await box.locator('..').textContent())!.trim());
    expect(checked).to.deep.equal(['send']);
    expect(await page.getByLabel('Expires at').inputValue()).to.equal('');
    expect(await page.getByLabel('IP allowlist').inputValue()).to.equal('');
    expect(await page.getByLabel('Daily limit').inputValue()).to.equal('');
    await screenshot(page, 'api-keys-form-reset');

    // and the next key is made with only what was typed for it
    await page.getByLabel('Name').fill('plain');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('status').filter({ hasText: 'The secret of plain' }).waitFor();
    const plain = (await h.app.request('GET', '/api/api-keys', { token: h.app.adminToken })).body.items.find((k: { name: string }) => k.name === 'plain');
    expect(plain).to.deep.include({ scopes: ['send'], expiresAt: null, dailyLimit: null });
    expect(plain.ipAllowlist ?? []).to.deep.equal([]);
  });

  it("a new key's secret stays on screen until that key is revoked, and goes then", async () => {
    const { page } = h;
    await api('POST', '/api/api-keys', { name: 'other', scopes: ['send'] });
    await page.goto('/api-keys');
    await page.getByLabel('Name').fill('short-lived');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = page.getByTestId('new-key');
    await secret.waitFor();
    // another key revoked: this one's secret is still to be stored
    await page.getByRole('button', { name: 'Revoke other' }).click();
    await page.getByRole('button', { name: 'Yes, revoke other' }).click();
    await page.getByRole('row').filter({ hasText: 'other' }).getByText(/^revoked/).waitFor();
    expect(await secret.count()).to.equal(1);
    expect(await page.getByRole('button', { name: 'Copy the new key' }).count()).to.equal(1);
    // its own key revoked: a secret that no longer works is not offered to store
    await page.getByRole('button', { name: 'Revoke short-lived' }).click();
    await page.getByRole('button', { name: 'Yes, revoke short-lived' }).click();
    await page.getByRole('row').filter({ hasText: 'short-lived' }).getByText(/^revoked/).waitFor();
    await secret.waitFor({ state: 'detached' });
    expect(await page.getByText('shown this once').count()).to.equal(0);
    expect(await page.getByRole('button', { name: 'Copy the new key' }).count()).to.equal(0);
    await expectAccessible(page);
    await screenshot(page, 'api-keys-secret-gone-after-revoke');
  });
});
