import { expect } from 'chai';
import { eventually, readyToSend } from '../support/email-setup.js';
import { readyToSendSms } from '../support/sms-setup.js';
import { expectAccessible, screenshot, startDashboard, type DashboardHarness } from '../support/browser.js';

describe('dashboard: messages, templates and the sandbox', function () {
  this.timeout(90_000);
  let h: DashboardHarness;
  let ids: string[] = [];
  let from: string;
  let key: string;
  before(async () => {
    h = await startDashboard();
    ({ key, from } = await readyToSend(h.app));
    const send = (body: Record<string, unknown>) => h.app.request('POST', '/api/send/transactional', { apiKey: key, body: { to: 'ada@example.com', fromEmail: from, text: 'hi', ...body } });
    for (let i = 0; i < 28; i++) {
      const res = await send({ subject: `Receipt ${i}`, html: `<p>Receipt number ${i}</p>`, to: `user${i}@example.com` });
      ids.push(res.body.messageLogId);
    }
    const special = await send({
      subject: 'Welcome aboard',
      html: '<h1 style="color:#1d4ed8">Welcome, Ada</h1><p>Your account is ready. <a href="https://example.com/start">Start here</a></p><img src="https://images.example.com/banner.png" alt="banner">',
      unsubscribeUrl: 'https://example.com/unsubscribe',
      attachments: [{ filename: 'terms.txt', content: Buffer.from('the terms').toString('base64') }],
      tags: ['welcome', 'onboarding'],
      metadata: { plan: 'pro' },
    });
    ids.push(special.body.messageLogId);
    await eventually(
      () => h.app.request('GET', '/api/messages?status=sent&limit=100', { token: h.app.adminToken }),
      (r) => r.body.items.length === ids.length,
      20_000,
    );
    // the chart's read model is kept by its own projection, which may trail the list's
    await eventually(
      () => h.app.request('GET', '/api/messages/timeseries', { token: h.app.adminToken }),
      (r) => r.body.buckets.reduce((n: number, b: { sent: number }) => n + b.sent, 0) === ids.length,
      20_000,
    );
  });
  after(async () => h?.close());

  it('lists messages with a chart, pages through them with the cursor, and keeps filters in the URL', async () => {
    const { page } = h;
    await page.goto('/messages');
    await page.getByRole('link', { name: 'ada@example.com' }).waitFor();
    expect(await page.getByRole('region', { name: 'History' }).getByRole('table').getByRole('row').count()).to.equal(26);
    await page.getByText('Sends: 29').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'messages');
    await page.getByRole('link', { name: 'Next page' }).click();
    await page.waitForURL(/cursor=/);
    await page.getByRole('link', { name: 'user3@example.com', exact: true }).waitFor();
    expect(await page.getByRole('region', { name: 'History' }).getByRole('table').getByRole('row').count()).to.equal(5);
    expect(await page.getByRole('link', { name: 'Next page' }).count()).to.equal(0);
    await page.getByRole('link', { name: 'First page' }).click();
    await page.getByRole('link', { name: 'ada@example.com' }).waitFor();
  });

  it('on a phone (390 px wide) the page does not scroll sideways: the wide table scrolls in its own box', async () => {
    const { page } = h;
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await page.goto('/messages');
      await page.getByRole('link', { name: 'ada@example.com' }).waitFor();
      const widths = await page.evaluate<{ page: number; view: number; box: number; table: number }>(`(() => {
        const box = document.querySelector('.table-scroll');
        return { page: document.documentElement.scrollWidth, view: window.innerWidth, box: box.clientWidth, table: box.scrollWidth };
      })()`);
      expect(widths.page, JSON.stringify(widths)).to.be.at.most(widths.view);
      expect(widths.table, 'the table is wider than its box, which scrolls').to.be.above(widths.box);
      await screenshot(page, 'messages-phone');
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  it('searches and filters by status and date range', async () => {
    const { page } = h;
    await page.goto('/messages');
    await page.getByRole('searchbox', { name: 'Search' }).fill('Receipt 1');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/search=Receipt\+1/);
    // Receipt 1 and Receipt 10..19
    await eventually(() => page.getByRole('region', { name: 'History' }).getByRole('table').getByRole('row').count(), (n) => n === 12);
    await page.getByLabel('Status').selectOption('failed');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText('No messages match.').waitFor();
    // a shared link opens the same view
    const today = new Date().toISOString().slice(0, 10);
    await page.goto(`/messages?search=Welcome&status=sent&from=${today}&to=${today}`);
    await page.getByRole('link', { name: 'ada@example.com' }).waitFor();
    expect(await page.getByRole('region', { name: 'History' }).getByRole('table').getByRole('row').count()).to.equal(2);
    expect(await page.getByLabel('From').inputValue()).to.equal(today);
    await page.goto(`/messages?from=2001-01-01&to=2001-01-02`);
    await page.getByText('No messages match.').waitFor();
    await screenshot(page, 'messages-filtered');
  });

  it("shows a message's headers, body (scripts and remote loads blocked, no open counted), timeline and history", async () => {
    const { page } = h;
    const id = ids[ids.length - 1];
    // Whatever the frame tries to load beyond the dashboard's own files: Chromium may report an
    // attempt, but none may complete (the frame's policy blocks it before any connection). Chromium
    // names that refusal `net::ERR_BLOCKED_BY_CSP` or, at times, just `csp`.
    const remote: string[] = [];
    const isRemote = (url: string) => !url.startsWith(h.app.baseUrl) || url.includes('/o/');
    page.on('requestfinished', (r) => isRemote(r.url()) && remote.push(`loaded ${r.url()}`));
    page.on('requestfailed', (r) => isRemote(r.url()) && !/BLOCKED_BY_CSP|blocked|^csp$/i.test(r.failure()?.errorText ?? '') && remote.push(`failed ${r.url()} ${r.failure()?.errorText}`));
    await page.goto(`/messages/${id}`);
    await page.getByRole('heading', { name: 'Welcome aboard', level: 1 }).waitFor();
    const frame = page.frameLocator('iframe[title="Message body (HTML)"]');
    await frame.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
    expect(await page.locator('iframe[title="Message body (HTML)"]').getAttribute('sandbox')).to.equal('');
    await page.getByRole('list').filter({ hasText: 'sent' }).first().waitFor();
    const historyTable = page.getByRole('region', { name: 'Event history' }).getByRole('table');
    await historyTable.getByRole('cell', { name: 'EmailQueued' }).waitFor();
    await historyTable.getByRole('cell', { name: 'ProviderAccepted' }).waitFor();
    await historyTable.getByRole('cell', { name: /^apikey:/ }).waitFor();
    const accepted = historyTable.getByRole('row').filter({ hasText: 'ProviderAccepted' });
    expect(await accepted.getByRole('cell').nth(3).textContent()).to.equal('system:send-worker');
    expect(await accepted.getByRole('cell').nth(4).textContent()).to.not.equal('—');
    // its tags, metadata and attachments as sent; the sandbox kept the bytes, which the link gives
    const facts = page.getByRole('region', { name: 'Headers' });
    // the key that sent it, by its name
    await facts.getByText(/^API key sender \(\w+\)$/).waitFor();
    await facts.getByText('welcome, onboarding', { exact: true }).waitFor();
    await facts.getByText('plan = pro', { exact: true }).waitFor();
    await facts.getByText('(text/plain, 9 bytes)').waitFor();
    const href = await facts.getByRole('link', { name: 'terms.txt' }).getAttribute('href');
    expect(href).to.equal(`/api/sandbox/emails/${id}/attachments/0`);
    expect(await page.evaluate<string>(`fetch(${JSON.stringify(href)}).then((r) => r.text())`)).to.equal('the terms');
    await expectAccessible(page);
    await screenshot(page, 'message-detail');
    await page.waitForTimeout(300);
    expect(remote).to.deep.equal([]);
    // the event log itself: no open was recorded
    const history = await h.app.request('GET', `/api/messages/${id}/history`, { token: h.app.adminToken });
    expect(history.body.map((e: { type: string }) => e.type)).to.deep.equal(['EmailQueued', 'ProviderAccepted']);
  });

  it("lists an open a link scanner made in the message's timeline as a suspected bot's, not counted", async () => {
    const { page } = h;
    const id = ids[0];
    const recorded = (await h.app.request('GET', '/api/sandbox/emails?limit=100', { token: h.app.adminToken })).body.items.find((e: { messageId: string }) => e.messageId === id);
    const pixel = recorded.html.match(/<img src="([^"]*\/o\/[^"]*)"/)[1].replace(/&amp;/g, '&');
    expect((await fetch(pixel, { headers: { 'user-agent': 'Barracuda Sentinel (EE)' } })).status).to.equal(200);
    await eventually(() => h.app.request('GET', `/api/messages/${id}`, { token: h.app.adminToken }), (r) => r.body.events.some((e: { type: string }) => e.type === 'opened'));
    await page.goto(`/messages/${id}`);
    const timeline = page.getByRole('region', { name: 'Timeline' });
    await timeline.getByRole('listitem').filter({ hasText: 'opened' }).getByText('(suspected bot, not counted)').waitFor();
    await page.getByRole('region', { name: 'Headers' }).getByText('0 / 0', { exact: true }).waitFor();
    await expectAccessible(page);
    await screenshot(page, 'message-bot-open');
  });

  it('previews a template live with sample variables, and saves it', async () => {
    const { page } = h;
    await page.goto('/templates');
    await page.getByLabel('Name').fill('welcome');
    await page.getByLabel('Subject').fill('Hello {{firstName}}');
    await page.getByLabel('HTML').fill('<p>Welcome to {{company}}, {{firstName}}!</p>');
    await page.getByLabel('Text', { exact: true }).fill('Welcome to {{company}}');
    await page.getByLabel('Sample variables').fill('{"firstName": "Grace", "company": "Navy"}');
    expect(await page.getByTestId('preview-subject').textContent()).to.equal('Hello Grace');
    await page.frameLocator('iframe[title="Preview of the HTML"]').getByText('Welcome to Navy, Grace!').waitFor();
    expect(await page.getByTestId('preview-text').textContent()).to.equal('Welcome to Navy');
    await page.getByLabel('Sample variables').fill('{"firstName": ');
    await page.getByRole('alert').filter({ hasText: 'Sample variables are not valid JSON' }).waitFor();
    await page.getByRole('button', { name: 'Create template' }).click();
    await page.getByText(/^Saved template welcome/).waitFor();
    const api = await h.app.request('GET', '/api/templates', { token: h.app.adminToken });
    expect(api.body.items.map((t: { name: string; subject: string }) => [t.name, t.subject])).to.deep.equal([['welcome', 'Hello {{firstName}}']]);
    await page.getByLabel('Sample variables').fill('{"firstName": "Grace", "company": "Navy"}');
    await expectAccessible(page);
    await screenshot(page, 'templates');
  });

  it('sends the saved template once to an inbox, with the sample variables, and links to the message', async () => {
    const { page } = h;
    await page.goto('/templates');
    await page.getByRole('button', { name: 'welcome', exact: true }).click();
    // the chosen template is in the URL: a reload opens it again
    await page.waitForURL(/\/templates\?template=/);
    await page.reload();
    await page.getByRole('button', { name: 'welcome', exact: true }).and(page.locator('[aria-current="true"]')).waitFor();
    expect(await page.getByLabel('Name').inputValue()).to.equal('welcome');
    await page.getByLabel('Sample variables').fill('{"firstName": "Grace", "company": "Navy"}');
    const form = page.getByRole('form', { name: 'Send a test' });
    await form.getByLabel('To').fill('grace@example.com');
    await form.getByLabel('From').fill('someone@unverified.example');
    await form.getByRole('button', { name: 'Send test' }).click();
    await page.getByRole('alert').filter({ hasText: 'someone@unverified.example is not verified for sending' }).waitFor();
    await form.getByLabel('From').fill(from);
    // an unsaved edit is not what is sent: the page says so
    await page.getByLabel('Subject').fill('Edited {{firstName}}');
    await page.getByText('(save your changes first to send them)').waitFor();
    await form.getByRole('button', { name: 'Send test' }).click();
    await page.getByRole('status').filter({ hasText: 'Sent a test to grace@example.com' }).waitFor();
    await expectAccessible(page);
    await screenshot(page, 'templates-send-test');
    await page.getByRole('link', { name: 'follow the message' }).click();
    await page.waitForURL(/\/messages\/[^/]+$/);
    await page.getByText('Hello Grace').first().waitFor();
    await page.getByText('test', { exact: true }).first().waitFor();
  });

  it('deletes a template only when asked twice', async () => {
    const { page } = h;
    await page.goto('/templates');
    await page.getByRole('button', { name: 'welcome', exact: true }).click();
    await page.getByRole('button', { name: 'Delete template welcome' }).click();
    await page.getByText('Campaigns using it will pause.').waitFor();
    await page.getByRole('button', { name: 'Cancel and keep welcome', exact: true }).click();
    expect((await h.app.request('GET', '/api/templates', { token: h.app.adminToken })).body.items).to.have.length(1);
    await page.getByRole('button', { name: 'Delete template welcome' }).click();
    await page.getByRole('button', { name: 'Yes, delete welcome' }).click();
    await eventually(
      async () => (await h.app.request('GET', '/api/templates', { token: h.app.adminToken })).body.items,
      (items: unknown[]) => items.length === 0,
    );
  });

  it('shows what the sandbox providers recorded: each email rendered with its headers and attachments, each SMS', async () => {
    const { page } = h;
    const sms = await readyToSendSms(h.app);
    const text = await h.app.request('POST', '/api/send/sms', { apiKey: sms.key, body: { to: '+14155552671', body: 'Your code is 4321' } });
    expect(text.status).to.equal(201);
    await eventually(() => h.app.request('GET', '/api/sandbox/sms', { token: h.app.adminToken }), (r) => r.body.items.length === 1);
    await page.goto('/sandbox');
    const list = page.getByRole('region', { name: 'Emails' }).getByRole('table');
    await list.getByRole('button', { name: 'View Welcome aboard to ada@example.com' }).click();
    // the header, the 29 sends, and the template's test
    expect(await list.getByRole('row').count()).to.equal(31);
    const email = page.getByRole('article', { name: 'Welcome aboard' });
    await email.waitFor();
    await email.frameLocator('iframe').getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
    await email.getByText('List-Unsubscribe', { exact: true }).waitFor();
    // the link downloads the recorded bytes with the page's session
    const link = email.getByRole('link', { name: 'terms.txt' });
    expect(await link.getAttribute('download')).to.equal('terms.txt');
    const file = await page.request.get((await link.getAttribute('href'))!);
    expect(file.headers()['content-disposition']).to.equal("attachment; filename*=UTF-8''terms.txt");
    expect(await file.text()).to.equal('the terms');
    await list.getByRole('button', { name: 'View Receipt 3 to user3@example.com' }).click();
    await page.getByRole('article', { name: 'Receipt 3' }).frameLocator('iframe').getByText('Receipt number 3').waitFor();
    expect(await page.getByRole('article').count()).to.equal(1);
    const recorded = page.getByRole('region', { name: 'SMS' }).getByRole('row').filter({ hasText: 'Your code is 4321' });
    expect(await recorded.getByRole('cell').nth(2).textContent()).to.equal('+14155552671');
    await expectAccessible(page);
    await screenshot(page, 'sandbox');
    // the API answers the 50 newest and no more: a full list says it is not all there is
    expect(await page.getByText(/newest .* are shown/).count()).to.equal(0);
    for (let i = 0; i < 20; i++) {
      const more = await h.app.request('POST', '/api/send/transactional', { apiKey: key, body: { to: `later${i}@example.com`, fromEmail: from, subject: `Later ${i}`, html: '<p>later</p>', text: 'later' } });
      expect(more.status, JSON.stringify(more.body)).to.equal(201);
    }
    await eventually(() => h.app.request('GET', '/api/sandbox/emails?limit=100', { token: h.app.adminToken }), (r) => r.body.items.length === 50);
    await page.reload();
    await list.getByRole('button', { name: 'View Later 19 to later19@example.com' }).waitFor();
    expect(await list.getByRole('row').count()).to.equal(51);
    await page.getByRole('region', { name: 'Emails' }).getByText('The 50 newest emails are shown; older ones are not listed.').waitFor();
    await screenshot(page, 'sandbox-newest-only');
  });

  it('a message whose recipient was erased says its address and subject are no longer kept, in the list and on its page', async () => {
    const { page } = h;
    const sent = await h.app.request('POST', '/api/send/transactional', { apiKey: key, body: { to: 'forgotten@example.com', fromEmail: from, subject: 'Forget me', html: '<p>x</p>', text: 'x' } });
    const eraser = (await h.app.createApiKey(['contacts:write'])).key;
    expect((await h.app.request('DELETE', '/api/contacts/forgotten@example.com?erase=true', { apiKey: eraser })).status).to.equal(200);
    await eventually(() => h.app.request('GET', `/api/messages/${sent.body.messageLogId}`, { token: h.app.adminToken }), (r) => r.body.to === null);
    await page.goto('/messages');
    const row = page.getByRole('row').filter({ hasText: '(subject no longer kept)' });
    await row.getByRole('link', { name: '(address no longer kept)' }).click();
    await page.getByRole('heading', { name: '(subject no longer kept)', level: 1 }).waitFor();
    await page.getByRole('region', { name: 'Headers' }).getByText('(address no longer kept)').waitFor();
    await page.getByRole('region', { name: 'Body' }).getByText('(body no longer kept)').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'message-detail-erased');
  });

  it('a message id that names no message says it is not found once', async () => {
    const { page } = h;
    // both reads of the page (the message, its history) answered before anything is counted
    const answered = ['/api/messages/nosuchid', '/api/messages/nosuchid/history'].map((path) => page.waitForResponse((r) => new URL(r.url()).pathname === path));
    await page.goto('/messages/nosuchid');
    const statuses = await Promise.all(answered.map(async (r) => (await r).status()));
    expect(statuses).to.deep.equal([404, 404]);
    await page.getByRole('alert').filter({ hasText: /not found/ }).first().waitFor();
    await page.waitForTimeout(300);
    expect(await page.getByRole('alert').allTextContents()).to.have.length(1);
    expect(await page.getByText(/not found/).count()).to.equal(1);
    // nor an empty history under it
    expect(await page.getByRole('heading', { name: 'Event history' }).count()).to.equal(0);
    await expectAccessible(page);
    await screenshot(page, 'message-detail-not-found');
  });
});
