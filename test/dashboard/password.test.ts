import { expect } from 'chai';
import { ADMIN_EMAIL, ADMIN_PASSWORD } from '../support/app.js';
import { expectAccessible, screenshot, signIn, startDashboard, type DashboardHarness } from '../support/browser.js';

describe('dashboard: changing your password', function () {
  this.timeout(90_000);
  let h: DashboardHarness;
  before(async () => {
    h = await startDashboard();
  });
  after(async () => h?.close());

  const fill = async (current: string, next: string, again = next) => {
    await h.page.getByLabel('Current password').fill(current);
    await h.page.getByLabel('New password', { exact: true }).fill(next);
    await h.page.getByLabel('New password again').fill(again);
    await h.page.getByRole('button', { name: 'Change password' }).click();
  };

  it('refuses a wrong current password and a mistyped repetition in words, then changes it: this session stays, another browser is signed out', async () => {
    const other = await h.newPage();
    await signIn(other);
    const { page } = h;
    await page.goto('/settings');

    await fill(ADMIN_PASSWORD, 'a new long password', 'a new long passwrod');
    await page.getByRole('alert').filter({ hasText: 'The new password and its repetition differ.' }).waitFor();
    await fill('not-the-password', 'a new long password');
    await page.getByRole('alert').filter({ hasText: 'currentPassword: this is not your current password' }).waitFor();

    await fill(ADMIN_PASSWORD, 'a new long password');
    await page.getByText('Password changed.').waitFor();
    expect(await page.getByLabel('Current password').inputValue()).to.equal('');
    await expectAccessible(page);
    await screenshot(page, 'settings-password-changed');

    // this session was renewed: the next page loads its data
    await page.goto('/api-keys');
    await page.getByRole('button', { name: 'Create key' }).waitFor();
    expect(new URL(page.url()).pathname).to.equal('/api-keys');
    // the other browser's session ended: its next call sends it to sign in
    await other.goto('/settings');
    await other.waitForURL(/\/login\?next=/);
    await other.getByRole('status').filter({ hasText: 'This session ended when the password was changed: sign in again.' }).waitFor();
    await screenshot(other, 'login-after-password-change');
    await signIn(other, 'a new long password');
    expect((await h.app.request('POST', '/api/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } })).status).to.equal(401);
  });
});
