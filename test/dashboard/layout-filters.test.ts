import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { eventually, readyToSend } from '../support/email-setup.js';
import { screenshot, signIn, startDashboard, type DashboardHarness } from '../support/browser.js';

/** How far the page is wider than its window (0: it does not scroll sideways). */
const overflow = (page: Page) => page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');

describe('dashboard: filters follow the URL, long words and phones fit the page, dates and times say their zone', function () {
  this.timeout(120_000);
  let h: DashboardHarness;
  let from: string;
  let messageId: string;
  // 200 characters, without a space
  const longTo = `${'a'.repeat(64)}@${'b'.repeat(60)}.${'c'.repeat(60)}.example.com`;
  const longSubject = `Subject${'x'.repeat(240)}`;
  const longName = `name${'n'.repeat(196)}`;
  const api = (method: string, path: string, body?: unknown) => h.app.request(method, path, { token: h.app.adminToken, body });

  before(async () => {
    h = await startDashboard();
    const ready = await readyToSend(h.app);
    from = ready.from;
    const sent = await h.app.request('POST', '/api/send/transactional', { apiKey: ready.key, body: { to: longTo, fromEmail: from, subject: longSubject, html: '<p>hi</p>', text: 'hi' } });
    expect(sent.status, JSON.stringify(sent.body)).to.equal(201);
    messageId = sent.body.messageLogId;
    const plain = await h.app.request('POST', '/api/send/transactional', { apiKey: ready.key, body: { to: 'plain@example.com', fromEmail: from, subject: 'Plain', html: '<p>hi</p>', text: 'hi' } });
    expect(plain.status).to.equal(201);
    expect((await api('POST', '/api/api-keys', { name: longName, scopes: ['send'] })).status).to.equal(201);
    expect((await api('POST', '/api/templates', { name: longName, subject: longSubject, html: '<p>x</p>', text: 'x' })).status).to.equal(201);
    await eventually(() => api('GET', '/api/messages?status=sent'), (r) => r.body.items.length === 2, 20_000);
    await eventually(() => api('GET', '/api/messages/timeseries'), (r) => r.body.buckets.reduce((n: number, b: { sent: number }) => n + b.sent, 0) === 2, 20_000);
  });
  after(async () => h?.close());

  it('the filter forms of Messages and Contacts show what the URL filters by after Back and after the navigation link', async () => {
    const { page } = h;
    await page.goto('/messages');
    await page.getByLabel('Status').selectOption('bounced');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/status=bounced/);
    await page.getByText('No messages match.').waitFor();
    await page.goBack();
    await page.waitForURL((u) => u.pathname === '/messages' && u.search === '');
    await page.getByRole('link', { name: 'plain@example.com' }).waitFor();
    expect(await page.getByLabel('Status').inputValue()).to.equal('');
    await page.goForward();
    await page.waitForURL(/status=bounced/);
    await eventually(() => page.getByLabel('Status').inputValue(), (v) => v === 'bounced');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Messages' }).click();
    await page.waitForURL((u) => u.pathname === '/messages' && u.search === '');
    await eventually(() => page.getByLabel('Status').inputValue(), (v) => v === '');

    await page.goto('/contacts');
    await page.getByLabel('Status').selectOption('bounced');
    await page.getByRole('searchbox', { name: 'Search' }).fill('nobody');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/status=bounced/);
    await page.goBack();
    await page.waitForURL((u) => u.pathname === '/contacts' && u.search === '');
    await eventually(() => page.getByLabel('Status').inputValue(), (v) => v === '');
    expect(await page.getByRole('searchbox', { name: 'Search' }).inputValue()).to.equal('');
  });

  for (const width of [1280, 390]) {
    it(`at ${width} px wide, a 200-character address, subject or name wraps instead of widening the page`, async () => {
      const { page } = h;
      await page.setViewportSize({ width, height: 900 });
      try {
        const pages: [string, () => Promise<unknown>][] = [
          ['/messages', () => page.getByText(longTo).waitFor()],
          [`/messages/${messageId}`, () => page.getByRole('heading', { name: longSubject, level: 1 }).waitFor()],
          ['/sandbox', () => page.getByRole('button', { name: `View ${longSubject} to ${longTo}` }).waitFor()],
          ['/api-keys', () => page.getByRole('cell', { name: longName, exact: true }).waitFor()],
          ['/templates', () => page.getByRole('button', { name: longName }).waitFor()],
          ['/campaigns', () => page.getByRole('option', { name: longName }).waitFor({ state: 'attached' })],
          ['/domains', () => page.getByRole('heading', { name: 'example.com' }).waitFor()],
          ['/contacts', () => page.getByRole('heading', { name: 'Contacts', level: 1 }).waitFor()],
          ['/audit', () => page.getByRole('heading', { name: 'Audit trail', level: 1 }).waitFor()],
        ];
        for (const [path, shown] of pages) {
          await page.goto(path);
          await shown();
          expect(await overflow(page), `${path} at ${width} px`).to.be.at.most(0);
        }
        await page.goto('/templates');
        await page.getByRole('button', { name: longName }).click();
        expect(await overflow(page), 'a template with a long name, open').to.be.at.most(0);
        await screenshot(page, `long-words-templates-${width}`);
        // a refused CSV row quoting a long value
        await page.goto('/contacts');
        await page.getByLabel('CSV file').setInputFiles({ name: 'long.csv', mimeType: 'text/csv', buffer: Buffer.from(`email,firstName\nok@example.com,Ok\n${'z'.repeat(300)},Long\n`) });
        await page.getByRole('button', { name: 'Import' }).click();
        await page.getByText('Imported 1 of 2 contacts').waitFor();
        await screenshot(page, `long-words-import-${width}`);
        await page.getByRole('alert').filter({ hasText: '1 row was not imported' }).waitFor();
        expect(await overflow(page), 'a refused row').to.be.at.most(0);
        await page.goto(`/messages/${messageId}`);
        await page.getByRole('heading', { name: longSubject, level: 1 }).waitFor();
        await screenshot(page, `long-words-message-${width}`);
        await page.goto('/messages');
        await page.getByText(longTo).waitFor();
        await screenshot(page, `long-words-messages-${width}`);
        if (width === 390) {
          // the navigation is one compact row, not a block of its own
          const nav = await page.getByRole('navigation', { name: 'Main' }).boundingBox();
          expect(nav!.height, 'the navigation row').to.be.below(60);
          await page.goto('/domains');
          await page.getByRole('heading', { name: 'example.com' }).waitFor();
          await screenshot(page, 'domains-phone');
        }
      } finally {
        await page.setViewportSize({ width: 1280, height: 900 });
      }
    });
  }

  it('the activity chart narrows with the window', async () => {
    const { page } = h;
    await page.goto('/messages');
    const chart = page.getByRole('region', { name: 'Activity' }).getByRole('img');
    await chart.locator('canvas').waitFor();
    const wide = (await chart.locator('canvas').boundingBox())!.width;
    expect(wide).to.be.above(900);
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await eventually(
        async () => ({ canvas: (await chart.locator('canvas').boundingBox())!.width, box: (await chart.boundingBox())!.width }),
        (w) => w.canvas <= w.box && w.box < 390,
      );
      expect(await overflow(page)).to.be.at.most(0);
      await screenshot(page, 'messages-chart-phone');
      await page.setViewportSize({ width: 1280, height: 900 });
      await eventually(async () => (await chart.locator('canvas').boundingBox())!.width, (w) => w > 900);
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  it("in a time zone far from UTC (UTC+14), today's dates filter today's messages and times name their zone", async () => {
    const context = await h.browser.newContext({ baseURL: h.app.baseUrl, viewport: { width: 1280, height: 900 }, timezoneId: 'Pacific/Kiritimati' });
    try {
      const page = await context.newPage();
      page.on('pageerror', (err) => {
        throw err;
      });
      await signIn(page);
      // today where the browser is (en-CA writes YYYY-MM-DD)
      const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Pacific/Kiritimati' }).format(new Date());
      await page.goto('/messages');
      await page.getByLabel('From', { exact: true }).fill(today);
      await page.getByLabel('To', { exact: true }).fill(today);
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await page.waitForURL(new RegExp(`from=${today}&to=${today}`));
      await page.getByRole('link', { name: 'plain@example.com' }).waitFor();
      const created = await page.getByRole('row').filter({ hasText: 'plain@example.com' }).getByRole('cell').first().textContent();
      expect(created).to.match(/GMT\+14$/);
      // the chart counts UTC days and says so
      await page.getByRole('region', { name: 'Activity' }).getByText('Counted per hour in UTC; the times listed are in your time zone (Pacific/Kiritimati).').waitFor();
      await screenshot(page, 'messages-kiritimati');
      // yesterday there: nothing
      const yesterday = new Intl.DateTimeFormat('en-CA', { timeZone: 'Pacific/Kiritimati' }).format(new Date(Date.now() - 86_400_000));
      await page.goto(`/messages?from=${yesterday}&to=${yesterday}`);
      await page.getByText('No messages match.').waitFor();

      // the audit trail's days are the same days
      await page.goto(`/audit?from=${today}&to=${today}`);
      await page.getByRole('cell', { name: 'api_key.created' }).first().waitFor();
      await page.goto(`/audit?from=${yesterday}&to=${yesterday}`);
      await page.getByText('Nothing recorded matches these filters.').waitFor();
    } finally {
      await context.close();
    }
  });
});
