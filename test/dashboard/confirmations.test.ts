import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { eventually, readyToSend } from '../support/email-setup.js';
import { expectAccessible, screenshot, startDashboard, type DashboardHarness } from '../support/browser.js';

/** The name a person's assistive technology reads for the focused element (its text, hidden parts included). */
const focused = (page: Page) => page.evaluate<string>(`(() => { const e = document.activeElement; return e.tagName === 'BODY' ? 'BODY' : e.textContent.replace(/\\s+/g, ' ').trim(); })()`);

describe('dashboard: a two-step confirmation asks about one thing, once, and keeps the keyboard in place', function () {
  this.timeout(90_000);
  let h: DashboardHarness;
  let from: string;
  const api = (method: string, path: string, body?: unknown) => h.app.request(method, path, { token: h.app.adminToken, body });
  /** A draft campaign of the first template to a list nobody is on: its id. */
  const draftCampaign = async (name: string) => {
    const templateId = (await api('GET', '/api/templates')).body.items[0].id;
    const created = await api('POST', '/api/campaigns', { name, templateId, fromEmail: from, audience: { listId: 'nobody-here' } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    return created.body.id as string;
  };

  before(async () => {
    h = await startDashboard();
    ({ from } = await readyToSend(h.app));
    for (const name of ['alpha', 'beta']) {
      const t = await api('POST', '/api/templates', { name, subject: `Subject ${name}`, html: `<p>${name}</p>`, text: name });
      expect(t.status).to.equal(201);
    }
  });
  after(async () => h?.close());

  it("an erasure asked about one address is not answered for another typed after it, and closes once done", async () => {
    const { page } = h;
    await page.goto('/contacts');
    const address = page.getByLabel('Their address or phone number');
    await address.fill('first@example.com');
    await page.getByRole('button', { name: 'Erase first@example.com' }).click();
    await page.getByRole('button', { name: 'Yes, erase for good first@example.com' }).waitFor();
    // the field edited: the question about first@ is gone, and none is asked about second@
    await address.fill('second@example.com');
    await page.getByRole('button', { name: 'Erase second@example.com' }).waitFor();
    expect(await page.getByRole('button', { name: /^Yes, erase for good/ }).count()).to.equal(0);

    await page.getByRole('button', { name: 'Erase second@example.com' }).click();
    await page.getByRole('button', { name: 'Yes, erase for good second@example.com' }).click();
    await page.getByRole('status').filter({ hasText: 'second@example.com is forgotten' }).waitFor();
    // done: the next address typed starts from the first button
    await page.getByRole('button', { name: 'Erase second@example.com' }).waitFor();
    expect(await page.getByRole('button', { name: /^Yes, erase for good/ }).count()).to.equal(0);
    await address.fill('third@example.com');
    await page.getByRole('button', { name: 'Erase third@example.com' }).waitFor();
    expect(await page.getByRole('button', { name: /^Yes, erase for good/ }).count()).to.equal(0);
  });

  it('opening another template closes a delete asked about the first, and asks before dropping unsaved changes', async () => {
    const { page } = h;
    await page.goto('/templates');
    await page.getByRole('button', { name: 'alpha', exact: true }).click();
    await page.getByRole('button', { name: 'Delete template alpha' }).click();
    await page.getByRole('button', { name: 'Yes, delete alpha' }).waitFor();
    await page.getByRole('button', { name: 'beta', exact: true }).click();
    await page.getByRole('button', { name: 'Delete template beta' }).waitFor();
    expect(await page.getByRole('button', { name: /^Yes, delete/ }).count()).to.equal(0);

    // an edit not saved: leaving asks; "no" keeps the edit on screen, "yes" opens the other
    await page.getByLabel('Subject').fill('Edited beta');
    const asked: string[] = [];
    page.once('dialog', (d) => {
      asked.push(d.message());
      void d.dismiss();
    });
    await page.getByRole('button', { name: 'alpha', exact: true }).click();
    expect(asked).to.deep.equal(['Discard your unsaved changes to template beta?']);
    expect(await page.getByLabel('Subject').inputValue()).to.equal('Edited beta');
    expect(await page.getByRole('button', { name: 'beta', exact: true }).getAttribute('aria-current')).to.equal('true');
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'alpha', exact: true }).click();
    await page.getByRole('button', { name: 'alpha', exact: true }).and(page.locator('[aria-current="true"]')).waitFor();
    expect(await page.getByLabel('Subject').inputValue()).to.equal('Subject alpha');
    // nothing edited: no question
    page.once('dialog', (d) => {
      asked.push(d.message());
      void d.dismiss();
    });
    await page.getByRole('button', { name: 'beta', exact: true }).click();
    expect(await page.getByLabel('Subject').inputValue()).to.equal('Subject beta');
    expect(asked).to.have.length(1);
    page.removeAllListeners('dialog');
    const stored = (await api('GET', '/api/templates')).body.items.map((t: { subject: string }) => t.subject).sort();
    expect(stored).to.deep.equal(['Subject alpha', 'Subject beta']);
  });

  it('Enter on a first button moves focus to its "Yes" button; Escape steps back to the first button', async () => {
    const { page } = h;
    // the shared confirmation (API key revoke, suppression remove, …)
    await api('POST', '/api/api-keys', { name: 'kbd', scopes: ['send'] });
    await page.goto('/api-keys');
    await page.getByRole('button', { name: 'Revoke kbd' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Yes, revoke kbd' }).waitFor();
    expect(await focused(page)).to.equal('Yes, revoke kbd');
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Revoke kbd' }).waitFor();
    expect(await page.getByRole('button', { name: 'Yes, revoke kbd' }).count()).to.equal(0);
    expect(await focused(page)).to.equal('Revoke kbd');
    // its Cancel returns focus too
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Cancel and keep kbd', exact: true }).click();
    expect(await focused(page)).to.equal('Revoke kbd');

    // a campaign's send (a form of its own) and delete
    const kbd = await draftCampaign('Kbd');
    await page.goto('/campaigns');
    await page.getByRole('button', { name: 'Send Kbd' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Yes, send Kbd' }).waitFor();
    expect(await focused(page)).to.equal('Yes, send Kbd');
    await screenshot(page, 'confirm-keyboard-campaign-send');
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Send Kbd' }).waitFor();
    expect(await focused(page)).to.equal('Send Kbd');
    await page.getByRole('button', { name: 'Delete Kbd' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Yes, delete Kbd' }).waitFor();
    expect(await focused(page)).to.equal('Yes, delete Kbd');
    await page.keyboard.press('Escape');
    expect(await focused(page)).to.equal('Delete Kbd');
    expect((await api('GET', `/api/campaigns/${kbd}`)).body.status).to.equal('draft');
    await expectAccessible(page);
  });

  it("a confirmation's Cancel names what it keeps: a draft campaign's row has no two buttons of one name", async () => {
    const { page } = h;
    const twin = await draftCampaign('Twin');
    await page.goto('/campaigns');
    const row = page.getByRole('row').filter({ hasText: 'Twin' });
    await page.getByRole('button', { name: 'Delete Twin' }).click();
    await page.getByRole('button', { name: 'Yes, delete Twin' }).waitFor();
    // the names a screen reader lists for the row's buttons: the campaign's own Cancel and the delete's way back differ
    const names = [...(await row.ariaSnapshot()).matchAll(/- button "((?:[^"\\]|\\.)*)"/g)].map((m) => JSON.parse(`"${m[1]}"`) as string);
    expect(names).to.deep.equal(['Send Twin', 'Edit Twin', 'Yes, delete Twin', 'Cancel and keep Twin', 'Cancel Twin']);
    expect(await page.getByRole('button', { name: 'Cancel', exact: true }).count()).to.equal(0);
    // what is seen is still "Cancel": the rest is for screen readers only
    const back = page.getByRole('button', { name: 'Cancel and keep Twin', exact: true });
    expect(await back.locator('.visually-hidden').textContent()).to.equal(' and keep Twin');
    expect(await back.textContent()).to.equal('Cancel and keep Twin');
    await screenshot(page, 'confirm-back-named');
    await back.click();
    await page.getByRole('button', { name: 'Delete Twin' }).waitFor();
    expect(await focused(page)).to.equal('Delete Twin');
    expect((await api('GET', `/api/campaigns/${twin}`)).body.status).to.equal('draft');
    await expectAccessible(page);
  });

  it('a campaign scheduled at a time already past says, before it goes, that it will start now', async () => {
    const { page } = h;
    const late = await draftCampaign('Late');
    await page.goto('/campaigns');
    const row = page.getByRole('row').filter({ hasText: 'Late' });
    const when = page.getByLabel('Schedule at Late');
    await when.fill('2020-01-01T10:00');
    await page.getByRole('button', { name: 'Send Late' }).click();
    await row.getByText(/^.+ is in the past: the campaign will start now\. Send now to the contacts of list nobody-here\?$/).waitFor();
    await screenshot(page, 'campaigns-confirm-past');
    // another time typed closes the question, leaving the keyboard in the field
    await when.fill('2099-01-01T10:00');
    expect(await page.getByRole('button', { name: 'Yes, send Late' }).count()).to.equal(0);
    expect(await page.evaluate<string>('document.activeElement.type')).to.equal('datetime-local');
    await page.getByRole('button', { name: 'Send Late' }).click();
    await row.getByText(/^Send at .+ to the contacts of list nobody-here\?$/).waitFor();
    await page.getByRole('button', { name: 'Back Late' }).click();
    await when.fill('2020-01-01T10:00');
    await page.getByRole('button', { name: 'Send Late' }).click();
    await page.getByRole('button', { name: 'Yes, send Late' }).click();
    const status = await eventually(async () => (await api('GET', `/api/campaigns/${late}`)).body.status, (s) => s !== 'draft');
    expect(status).to.not.equal('scheduled');
  });
});
