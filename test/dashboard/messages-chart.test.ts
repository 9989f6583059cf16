import { expect } from 'chai';
import { eventually, readyToSend } from '../support/email-setup.js';
import { expectAccessible, screenshot, startDashboard, type DashboardHarness } from '../support/browser.js';

describe("dashboard: the messages chart follows the URL's filters", function () {
  this.timeout(90_000);
  let h: DashboardHarness;
  const sum = (buckets: { sent: number }[]) => buckets.reduce((n, b) => n + b.sent, 0);
  before(async () => {
    h = await startDashboard();
    const { key, from } = await readyToSend(h.app);
    const sends: Record<string, unknown>[] = [
      { subject: 'VIP 1', tags: ['vip'], metadata: { plan: 'pro' } },
      { subject: 'VIP 2', tags: ['vip'] },
      { subject: 'VIP 3', tags: ['vip', 'eu'] },
      { subject: 'Plain 1', metadata: { 'Zahlungs & Art': 'Karte + Bar', '50%': 'ja' } },
      { subject: 'Plain 2', metadata: { plan: 'free' } },
    ];
    for (const [i, body] of sends.entries()) {
      const res = await h.app.request('POST', '/api/send/transactional', { apiKey: key, body: { to: `user${i}@example.com`, fromEmail: from, html: '<p>hi</p>', text: 'hi', ...body } });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
    }
    // the chart's read model is kept by its own projection, which may trail the list's
    await eventually(() => h.app.request('GET', '/api/messages/timeseries', { token: h.app.adminToken }), (r) => sum(r.body.buckets) === sends.length, 20_000);
  });
  after(async () => h?.close());

  const history = () => h.page.getByRole('region', { name: 'History' }).getByRole('table').getByRole('row');
  const activity = () => h.page.getByRole('region', { name: 'Activity' });

  it('a tag in the URL filters the chart and the list alike', async () => {
    const { page } = h;
    await page.goto('/messages');
    await activity().getByText('Sends: 5').waitFor();
    await page.goto('/messages?tag=vip');
    await activity().getByText('Sends: 3').waitFor();
    await eventually(() => history().count(), (n) => n === 4);
    expect(await activity().getByRole('img').getAttribute('aria-label')).to.match(/^Messages per day: Sends 3, /);
    expect(await page.locator('#chart-note').count()).to.equal(0);
    expect(await page.getByLabel('Tags').inputValue()).to.equal('vip');
    await expectAccessible(page);
    await screenshot(page, 'messages-chart-tag');
  });

  it('a metadata entry and a status in the URL filter the chart', async () => {
    const { page } = h;
    await page.goto('/messages?metadata%5Bplan%5D=pro');
    await activity().getByText('Sends: 1').waitFor();
    expect(await page.getByLabel('Metadata').inputValue()).to.equal('plan=pro');
    await page.goto('/messages?status=failed&tag=vip');
    await activity().getByText('Sends: 0').waitFor();
    await page.getByText('No messages match.').waitFor();
  });

  it('a metadata key with a space, `&` or `%` filters the chart and the list as any other', async () => {
    const { page } = h;
    await page.goto(`/messages?${new URLSearchParams({ 'metadata[Zahlungs & Art]': 'Karte + Bar', 'metadata[50%]': 'ja' })}`);
    await activity().getByText('Sends: 1').waitFor();
    await eventually(() => history().count(), (n) => n === 2);
    expect(await history().nth(1).textContent()).to.contain('Plain 1');
    expect(await page.getByLabel('Metadata').inputValue()).to.equal('Zahlungs & Art=Karte + Bar; 50%=ja');
  });

  it('a date in the URL that is no day (edited by hand): the page still draws, the list says what the API refused', async () => {
    const { page } = h;
    await page.goto('/messages?to=not-a-day');
    await activity().getByText('Sends: 5').waitFor();
    await page.getByText(/^to: /).waitFor();
    await screenshot(page, 'messages-bad-date');
  });

  it('the form writes tags and metadata into the URL, and the chart follows', async () => {
    const { page } = h;
    await page.goto('/messages');
    await activity().getByText('Sends: 5').waitFor();
    await page.getByLabel('Tags').fill('eu');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/\?tag=eu$/);
    await activity().getByText('Sends: 1').waitFor();
    await page.getByLabel('Tags').fill('');
    await page.getByLabel('Metadata').fill('plan=free');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/metadata%5Bplan%5D=free$/);
    await activity().getByText('Sends: 1').waitFor();
    await eventually(() => history().count(), (n) => n === 2);
  });

  it('says which filters the chart cannot follow (search, a second tag) and draws it for the others', async () => {
    const { page } = h;
    await page.goto('/messages?search=VIP%203&tag=vip&tag=eu');
    await eventually(() => history().count(), (n) => n === 2);
    // the chart follows the first tag only: all three vip messages
    await activity().getByText('Sends: 3').waitFor();
    expect(await page.locator('#chart-note').textContent()).to.equal(
      'The chart is drawn from counts kept per status, tag and metadata entry, so it does not follow search “VIP 3” and tag eu: those filters narrow the list only.',
    );
    await expectAccessible(page);
    await screenshot(page, 'messages-chart-note');
  });
  it('a filter the API refuses shows the refusal alone: not the chart and list of the filters before it', async () => {
    const { page } = h;
    await page.goto('/messages');
    await activity().getByText('Sends: 5').waitFor();
    await eventually(() => history().count(), (n) => n === 6);
    await page.getByLabel('Tags').fill('bad!tag');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/tag=bad%21tag/);
    await activity().getByRole('alert').waitFor();
    await page.getByRole('region', { name: 'History' }).getByRole('alert').waitFor();
    expect(await activity().getByText(/^Sends:/).count()).to.equal(0);
    expect(await activity().getByRole('img').count()).to.equal(0);
    expect(await history().count()).to.equal(0);
    await screenshot(page, 'messages-refused-tag');

    // From after To, which the chart refuses: no chart of the last good view under the refusal
    await page.goto('/messages');
    await activity().getByText('Sends: 5').waitFor();
    await page.getByLabel('From', { exact: true }).fill('2026-03-10');
    await page.getByLabel('To', { exact: true }).fill('2026-03-01');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/from=2026-03-10/);
    await activity().getByText('from must not be after to').waitFor();
    expect(await activity().getByRole('img').count()).to.equal(0);
    // the list takes such a range, and finds nothing in it
    await page.getByText('No messages match.').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'messages-refused-dates');
  });
});
