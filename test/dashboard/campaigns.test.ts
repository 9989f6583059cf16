import { expect } from 'chai';
import { eventually, readyToSend } from '../support/email-setup.js';
import { expectAccessible, screenshot, startDashboard, type DashboardHarness } from '../support/browser.js';

describe('dashboard: campaigns', function () {
  this.timeout(90_000);
  let h: DashboardHarness;
  let from: string;
  const api = (method: string, path: string, body?: unknown) => h.app.request(method, path, { token: h.app.adminToken, body });

  before(async () => {
    // small fan-out steps, so the page sees the campaign sending before it is sent
    h = await startDashboard({ CAMPAIGN_STEP_SIZE: '2', CAMPAIGN_TIMER_INTERVAL_MS: '200' });
    ({ from } = await readyToSend(h.app));
    const t = await api('POST', '/api/templates', { name: 'spring', subject: 'Hello {{firstName}}', html: '<p>Hi {{firstName}}</p>', text: 'Hi {{firstName}}' });
    expect(t.status).to.equal(201);
    for (const [i, status] of ['subscribed', 'subscribed', 'subscribed', 'subscribed', 'subscribed', 'unsubscribed'].entries()) {
      const c = await api('POST', '/api/contacts', { email: `reader${i}@example.org`, firstName: `Reader${i}`, listIds: ['news'], status });
      expect(c.status).to.equal(201);
    }
  });
  after(async () => h?.close());

  it('creates a campaign from a template and a list, sends it and watches its progress reach sent', async () => {
    const { page } = h;
    await page.goto('/campaigns');
    await page.getByRole('link', { name: 'Campaigns' }).and(page.locator('[aria-current="page"]')).waitFor();
    await page.getByRole('textbox', { name: 'Name' }).fill('Spring sale');
    await page.getByLabel('Template').selectOption({ label: 'spring' });
    await page.getByRole('textbox', { name: 'From email' }).fill(from);
    await page.getByRole('textbox', { name: 'List id' }).fill('news');
    await page.getByRole('button', { name: 'Create campaign' }).click();
    const row = page.getByRole('row').filter({ hasText: 'Spring sale' });
    await row.getByText('draft').waitFor();

    const [created] = (await api('GET', '/api/campaigns')).body.items;
    expect(created).to.deep.include({ name: 'Spring sale', status: 'draft', fromEmail: from, audience: { listId: 'news' } });

    // not counted until it starts: the draft says whom it is for, and a send asks first
    await row.getByText('To the contacts of list news').waitFor();
    await page.getByRole('button', { name: 'Send Spring sale' }).click();
    await row.getByText('Send now to the contacts of list news?').waitFor();
    await screenshot(page, 'campaigns-confirm-send');
    expect((await api('GET', `/api/campaigns/${created.id}`)).body.status).to.equal('draft');
    await page.getByRole('button', { name: 'Yes, send Spring sale' }).click();
    // no reload: the page polls while the campaign is sending
    await row.getByText('sent', { exact: true }).waitFor({ timeout: 30_000 });
    await row.getByText('6 audience, 5 queued, 1 skipped').waitFor();
    const sent = (await api('GET', `/api/campaigns/${created.id}`)).body;
    expect(sent.status).to.equal('sent');
    // nothing is left to do with a sent campaign: no action is offered
    expect(await row.getByRole('button').count()).to.equal(0);
    expect(sent.progress).to.deep.include({ audience: 6, queued: 5, skipped: 1 });

    // the stats are the campaign's message aggregate, counted as the messages are recorded; they go on
    // changing once the fan-out is done (sends, then what providers report), and the page reads them
    // again without a reload: an open after the campaign was sent
    await eventually(() => api('GET', `/api/campaigns/${created.id}`), (r) => r.body.stats.total === 5, 20_000);
    const [opened] = (await api('GET', '/api/messages?limit=100')).body.items.filter((m: { campaignId: string | null }) => m.campaignId === created.id);
    const recorded = await eventually(
      async () => (await api('GET', '/api/sandbox/emails?limit=50')).body.items.find((e: { messageId: string }) => e.messageId === opened.id),
      (e) => Boolean(e),
    );
    const pixel = recorded.html.match(/<img src="([^"]*\/o\/[^"]*)"/)[1].replace(/&amp;/g, '&');
    expect((await fetch(pixel, { headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36' } })).status).to.equal(200);
    await row.getByText(/^5 messages: 5 sent; 1 opened, 0 clicked$/).waitFor({ timeout: 20_000 });
    await page.reload();
    await row.getByText(/^5 messages:/).waitFor();
    await expectAccessible(page);
    await screenshot(page, 'campaigns');

    // one of its messages names the campaign and the recipient's contact
    const [message] = (await api('GET', '/api/messages?limit=100')).body.items.filter((m: { campaignId: string | null }) => m.campaignId === created.id);
    await page.goto(`/messages/${message.id}`);
    const facts = page.getByRole('region', { name: 'Headers' });
    await facts.getByRole('link', { name: 'Spring sale' }).waitFor();
    expect(await facts.getByRole('link', { name: message.to }).getAttribute('href')).to.equal(`/contacts?search=${encodeURIComponent(message.to)}`);
    await facts.getByText('(subscribed)').waitFor();
  });

  it('sends to all contacts only when that is chosen: filters left blank are asked about, not taken as everyone', async () => {
    const { page } = h;
    await page.goto('/campaigns');
    await page.getByRole('textbox', { name: 'Name' }).fill('Everyone');
    await page.getByLabel('Template').selectOption({ label: 'spring' });
    await page.getByRole('textbox', { name: 'From email' }).fill(from);
    await page.getByRole('button', { name: 'Create campaign' }).click();
    await page.locator('#campaign-create-error').filter({ hasText: 'Give a list id or a tag, or choose All contacts' }).waitFor();
    expect((await api('GET', '/api/campaigns')).body.items.map((c: { name: string }) => c.name)).not.to.include('Everyone');

    await page.getByRole('textbox', { name: 'List id' }).fill('news');
    await page.getByRole('checkbox', { name: 'All contacts' }).check();
    // the filters are cleared and closed: all contacts is neither list nor tag
    expect(await page.getByRole('textbox', { name: 'List id' }).inputValue()).to.equal('');
    expect(await page.getByRole('textbox', { name: 'List id' }).isDisabled()).to.equal(true);
    expect(await page.getByRole('textbox', { name: 'Tag' }).isDisabled()).to.equal(true);
    await screenshot(page, 'campaigns-all-contacts-form');
    await page.getByRole('button', { name: 'Create campaign' }).click();
    const row = page.getByRole('row').filter({ hasText: 'Everyone' });
    await row.getByText('To all contacts').waitFor();
    const created = (await api('GET', '/api/campaigns')).body.items.find((c: { name: string }) => c.name === 'Everyone');
    expect(created.audience).to.deep.equal({});

    // edited, the form shows the choice it was made with
    await page.getByRole('button', { name: 'Edit Everyone' }).click();
    expect(await page.getByRole('checkbox', { name: 'All contacts' }).isChecked()).to.equal(true);
    await page.getByRole('button', { name: 'Stop editing' }).click();
    expect(await page.getByRole('checkbox', { name: 'All contacts' }).isChecked()).to.equal(false);

    await page.getByRole('button', { name: 'Send Everyone' }).click();
    await row.getByText('Send now to all contacts?').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'campaigns-all-contacts-confirm');
    await page.getByRole('button', { name: 'Yes, send Everyone' }).click();
    await row.getByText('sent', { exact: true }).waitFor({ timeout: 30_000 });
    await row.getByText('6 audience, 5 queued, 1 skipped').waitFor();
  });

  it('previews the chosen template for one contact of the audience, rendered with that contact\'s fields', async () => {
    const { page } = h;
    // newer contacts whose addresses contain reader1's come first in a search for it: more than a page of them
    const namesakes = Array.from({ length: 120 }, (_, i) => ({ email: `also${i}.reader1@example.org` }));
    expect((await api('POST', '/api/contacts/import', { contacts: namesakes })).body.created).to.equal(120);
    await page.goto('/campaigns');
    await page.getByLabel('Template').selectOption({ label: 'spring' });
    await page.getByRole('textbox', { name: 'Contact email' }).fill('nobody@example.org');
    await page.getByRole('button', { name: 'Preview', exact: true }).click();
    await page.getByText('No contact nobody@example.org').waitFor();

    await page.getByRole('textbox', { name: 'Contact email' }).fill('READER1@example.org');
    await page.getByRole('button', { name: 'Preview', exact: true }).click();
    await page.getByTestId('campaign-preview-subject').getByText('Hello Reader1', { exact: true }).waitFor();
    const body = page.frameLocator('iframe[title="Preview of the message to reader1@example.org"]').getByText('Hi Reader1');
    await body.waitFor();
    await expectAccessible(page);
    await screenshot(page, 'campaigns-preview');

    // an address that is no contact, asked after reader1: the refusal alone, not reader1's preview under it
    await page.getByRole('textbox', { name: 'Contact email' }).fill('nobody@example.org');
    await page.getByRole('button', { name: 'Preview', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: 'No contact nobody@example.org' }).waitFor();
    expect(await page.getByTestId('campaign-preview-subject').count()).to.equal(0);
    expect(await page.locator('iframe[title^="Preview of the message to"]').count()).to.equal(0);
    expect(await page.getByText('To reader1@example.org').count()).to.equal(0);
    await screenshot(page, 'campaigns-preview-no-contact');
    // and another contact's preview replaces the refusal
    await page.getByRole('textbox', { name: 'Contact email' }).fill('reader2@example.org');
    await page.getByRole('button', { name: 'Preview', exact: true }).click();
    await page.getByTestId('campaign-preview-subject').getByText('Hello Reader2', { exact: true }).waitFor();
    expect(await page.getByRole('alert').count()).to.equal(0);
    expect(await page.locator('iframe[title^="Preview of the message to"]').count()).to.equal(1);
  });
  it('a campaign scheduled a few seconds ahead is seen starting and reaching sent without a reload', async () => {
    const { page } = h;
    await api('POST', '/api/campaigns', { name: 'Soon', templateId: (await api('GET', '/api/templates')).body.items[0].id, fromEmail: from, audience: { listId: 'news' } });
    await page.goto('/campaigns');
    const row = page.getByRole('row').filter({ hasText: 'Soon' });
    await row.getByText('draft').waitFor();
    // the browser's own local time, as a datetime-local field takes it, four seconds from now
    // (a string, not a function: the test runner's compiled helpers do not exist in the page)
    const soon = await page.evaluate<string>(`(() => {
      const d = new Date(Date.now() + 4000);
      return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 19);
    })()`);
    await page.getByLabel('Schedule at Soon').fill(soon);
    await page.getByRole('button', { name: 'Send Soon' }).click();
    await page.getByRole('button', { name: 'Yes, send Soon' }).click();
    await row.getByText('scheduled').waitFor();
    // only the page's own re-reads can show what happened after the click
    await row.getByText('sent', { exact: true }).waitFor({ timeout: 30_000 });
    await row.getByText('6 audience, 5 queued, 1 skipped').waitFor();
  });

  it('offers the actions its status allows, and shows the API refusal in words when the row was out of date', async () => {
    const { page } = h;
    const template = (await api('GET', '/api/templates')).body.items[0].id;
    const { id } = (await api('POST', '/api/campaigns', { name: 'Stale', templateId: template, fromEmail: from, audience: { listId: 'news' } })).body;
    await page.goto('/campaigns');
    const row = page.getByRole('row').filter({ hasText: 'Stale' });
    await row.getByText('draft').waitFor();
    const offered = async () => (await row.getByRole('button').allTextContents()).map((t) => t.replace(' Stale', ''));
    expect(await offered()).to.deep.equal(['Send', 'Edit', 'Delete', 'Cancel']);
    // sent meanwhile elsewhere: the page still shows the draft
    expect((await api('POST', `/api/campaigns/${id}/send`, {})).status).to.equal(202);
    await page.getByRole('button', { name: 'Send Stale' }).click();
    await page.getByRole('button', { name: 'Yes, send Stale' }).click();
    const alert = row.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).to.match(/^cannot send a campaign that is (sending|sent)$/);
    // and the row is read again: a sent campaign offers nothing more
    await row.getByText('sent', { exact: true }).waitFor({ timeout: 30_000 });
    expect(await offered()).to.deep.equal([]);
    await screenshot(page, 'campaigns-conflict');
  });

  it('edits a draft in the form it was created with, and deletes a draft after confirmation', async () => {
    const { page } = h;
    const spring = (await api('GET', '/api/templates')).body.items[0].id;
    const summer = (await api('POST', '/api/templates', { name: 'summer', subject: 'Summer', html: '<p>Sun</p>', text: 'Sun' })).body.id;
    const { id } = (await api('POST', '/api/campaigns', { name: 'Draft one', templateId: spring, fromEmail: from, audience: { listId: 'news' } })).body;
    await api('POST', '/api/campaigns', { name: 'Throwaway', templateId: spring, fromEmail: from, audience: { listId: 'news' } });
    await page.goto('/campaigns');
    await page.getByRole('button', { name: 'Edit Draft one' }).click();
    await page.getByRole('status').filter({ hasText: 'Editing Draft one (draft)' }).waitFor();
    expect(await page.getByRole('textbox', { name: 'List id' }).inputValue()).to.equal('news');
    await page.getByRole('textbox', { name: 'Name' }).fill('Summer one');
    await page.getByLabel('Template').selectOption({ label: 'summer' });
    await page.getByRole('textbox', { name: 'Tag' }).fill('vip');
    await screenshot(page, 'campaigns-edit');
    await page.getByRole('button', { name: 'Save campaign' }).click();
    await page.getByRole('row').filter({ hasText: 'Summer one' }).waitFor();
    await page.getByRole('button', { name: 'Create campaign' }).waitFor();
    expect((await api('GET', `/api/campaigns/${id}`)).body).to.deep.include({ name: 'Summer one', templateId: summer, audience: { listId: 'news', tag: 'vip' } });

    await page.getByRole('button', { name: 'Delete Throwaway' }).click();
    await page.getByRole('button', { name: 'Yes, delete Throwaway' }).click();
    await page.getByRole('row').filter({ hasText: 'Throwaway' }).waitFor({ state: 'detached' });
    expect((await api('GET', '/api/campaigns')).body.items.map((c: { name: string }) => c.name)).not.to.include('Throwaway');
    await expectAccessible(page);
  });

  it('schedules a campaign for later and cancels it after confirmation; a create error is shown by the form', async () => {
    const { page } = h;
    await page.goto('/campaigns');
    await page.getByRole('textbox', { name: 'Name' }).fill('Autumn');
    await page.getByLabel('Template').selectOption({ label: 'spring' });
    await page.getByRole('textbox', { name: 'From email' }).fill('someone@unverified.test');
    await page.getByRole('textbox', { name: 'Tag' }).fill('vip');
    await page.getByRole('button', { name: 'Create campaign' }).click();
    await page.locator('#campaign-create-error').filter({ hasText: 'someone@unverified.test is not verified for sending' }).waitFor();

    await page.getByRole('textbox', { name: 'From email' }).fill(from);
    await page.getByRole('button', { name: 'Create campaign' }).click();
    const row = page.getByRole('row').filter({ hasText: 'Autumn' });
    await row.getByText('draft').waitFor();
    await page.getByLabel('Schedule at Autumn').fill('2099-01-01T09:00');
    await page.getByRole('button', { name: 'Send Autumn' }).click();
    await page.getByRole('button', { name: 'Yes, send Autumn' }).click();
    await row.getByText('scheduled').waitFor();
    const scheduled = (await api('GET', '/api/campaigns')).body.items.find((c: { name: string }) => c.name === 'Autumn');
    expect(scheduled).to.deep.include({ status: 'scheduled', audience: { tag: 'vip' } });
    expect(scheduled.scheduledAt.slice(0, 4)).to.equal('2099');

    // paused and resumed before its time, it is scheduled again, not sent
    // the status badge by its exact word: a paused row also says it is "scheduled for" its time
    await page.getByRole('button', { name: 'Pause Autumn' }).click();
    await row.getByText('paused', { exact: true }).waitFor();
    // what resuming will do: its schedule still stands
    await row.getByText(/scheduled for .*2099/).waitFor();
    await screenshot(page, 'campaigns-paused');
    await page.getByRole('button', { name: 'Resume Autumn' }).click();
    await row.getByText('scheduled', { exact: true }).waitFor();
    expect((await api('GET', `/api/campaigns/${scheduled.id}`)).body).to.deep.include({ status: 'scheduled', scheduledAt: scheduled.scheduledAt, startedAt: null });

    await page.getByRole('button', { name: 'Cancel Autumn' }).click();
    await page.getByRole('button', { name: 'Yes, cancel Autumn' }).click();
    await row.getByText('cancelled').waitFor();
    expect((await api('GET', `/api/campaigns/${scheduled.id}`)).body.status).to.equal('cancelled');
  });
});
