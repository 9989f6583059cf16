import { expect } from 'chai';
import { eventually } from '../support/email-setup.js';
import { expectAccessible, screenshot, startDashboard, type DashboardHarness } from '../support/browser.js';

describe('dashboard: contacts and suppressions', function () {
  this.timeout(60_000);
  let h: DashboardHarness;
  before(async () => {
    h = await startDashboard();
  });
  after(async () => h?.close());

  it('imports a CSV in batches with progress (quoted commas kept), then searches and filters contacts', async () => {
    const { page } = h;
    const rows = ['email,firstName,lastName,company,tags'];
    for (let i = 0; i < 1100; i++) rows.push(`person${i}@example.com,Person,${i},"Acme, Inc.",${i % 2 ? 'vip;beta' : 'beta'}`);
    rows.push('grace@example.com,Grace,Hopper,"Navy, US",admiral');
    await page.goto('/contacts');
    // an empty account says what to do
    await page.getByText('0 contacts: add one below, or import a CSV file from another tool.').waitFor();
    await page.getByLabel('CSV file').setInputFiles({ name: 'contacts.csv', mimeType: 'text/csv', buffer: Buffer.from(rows.join('\n')) });
    await page.getByLabel('Add to list').fill('newsletter');
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByText('Imported 1101 of 1101 contacts: 1101 created, 0 updated, 0 unchanged.').waitFor();
    expect(await page.getByRole('progressbar').getAttribute('value')).to.equal('1101');
    const grace = await h.app.request('GET', '/api/contacts?search=grace', { token: h.app.adminToken });
    expect(grace.body.items[0]).to.deep.include({ email: 'grace@example.com', company: 'Navy, US', tags: ['admiral'], listIds: ['newsletter'] });

    await page.getByRole('searchbox', { name: 'Search' }).fill('grace');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/search=grace/);
    await page.getByRole('cell', { name: 'grace@example.com' }).waitFor();
    await page.getByText('1 contact', { exact: true }).waitFor();
    // by status, chosen in the form: grace unsubscribed is the only one that is
    expect((await h.app.request('POST', '/api/contacts', { token: h.app.adminToken, body: { email: 'grace@example.com', status: 'unsubscribed' } })).status).to.equal(200);
    await page.getByRole('searchbox', { name: 'Search' }).fill('');
    await page.getByLabel('Status').selectOption('unsubscribed');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/status=unsubscribed/);
    await page.getByText('1 contact', { exact: true }).waitFor();
    await page.getByRole('cell', { name: 'grace@example.com' }).waitFor();
    await page.goto('/contacts?status=subscribed&listId=newsletter');
    await page.getByText('1100 contacts', { exact: true }).waitFor();
    await page.goto('/contacts?listId=newsletter');
    await page.getByText('1101 contacts', { exact: true }).waitFor();
    await page.goto('/contacts?listId=other');
    await page.getByText('0 contacts match these filters.', { exact: true }).waitFor();
    await page.goto('/contacts?tag=vip');
    await page.getByText('550 contacts', { exact: true }).waitFor();
    await page.getByRole('link', { name: 'Next page' }).click();
    await page.waitForURL(/page=2/);
    await expectAccessible(page);
    await screenshot(page, 'contacts');
  });

  it('a CSV row the API refuses is reported in words beside the import', async () => {
    const { page } = h;
    await page.goto('/contacts');
    await page.getByLabel('CSV file').setInputFiles({ name: 'bad.csv', mimeType: 'text/csv', buffer: Buffer.from('email,firstName\nok@example.com,Ok\nnot-an-email,Bad\n') });
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByText('Imported 1 of 2 contacts: 1 created').waitFor();
    const alert = page.getByRole('alert').filter({ hasText: '1 row was not imported' });
    expect(await alert.getByRole('listitem').textContent()).to.match(/^Line 3 \(not-an-email\): .+/);
  });

  it("reads another service's export (its own header names, a byte-order mark, semicolons) and refuses a CSV without addresses", async () => {
    const { page } = h;
    await page.goto('/contacts');
    const exported = '\uFEFFEmail Address;First Name;Last Name;Organization;Tags\nlin@example.com;Lin;Yu;Yu & Co;export\n';
    await page.getByLabel('CSV file').setInputFiles({ name: 'export.csv', mimeType: 'text/csv', buffer: Buffer.from(exported) });
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByText('Imported 1 of 1 contacts: 1 created').waitFor();
    const lin = await h.app.request('GET', '/api/contacts?search=lin@example.com', { token: h.app.adminToken });
    expect(lin.body.items[0]).to.deep.include({ email: 'lin@example.com', firstName: 'Lin', lastName: 'Yu', company: 'Yu & Co', tags: ['export'] });

    await page.getByLabel('CSV file').setInputFiles({ name: 'names.csv', mimeType: 'text/csv', buffer: Buffer.from('name,phone\nLin,+15550100\n') });
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByText('The CSV has no email column (its header row names: name, phone). Name the column of addresses "email".').waitFor();
    // nothing was sent: the previous import's progress is not shown as this one's
    expect(await page.getByRole('progressbar').count()).to.equal(0);
    await screenshot(page, 'contacts-import-no-email-column');
  });

  it("exports what is kept about an address as a file, then erases the person after asking", async () => {
    const { page } = h;
    const token = { token: h.app.adminToken };
    await page.goto('/contacts');
    // added by hand
    const add = page.getByRole('region', { name: 'Add a contact' });
    await add.getByLabel('Email').fill('rhoda@example.com');
    await add.getByLabel('First name').fill('Rhoda');
    await add.getByLabel('Lists').fill('news; vip, news');
    await add.getByRole('button', { name: 'Add contact' }).click();
    await add.getByRole('status').filter({ hasText: 'rhoda@example.com added.' }).waitFor();
    await screenshot(page, 'contacts-add');
    const added = (await h.app.request('GET', '/api/contacts?search=rhoda', token)).body.items[0];
    expect(added).to.deep.include({ email: 'rhoda@example.com', firstName: 'Rhoda', lastName: null, listIds: ['news', 'vip'] });
    await page.getByLabel('Their address or phone number').fill('rhoda@example.com');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export their data' }).click()]);
    expect(download.suggestedFilename()).to.equal('personal-data-rhoda@example.com.json');
    const saved = JSON.parse(await new Promise<string>((resolve, reject) => download.createReadStream().then((s) => {
      let text = '';
      s.on('data', (c) => (text += c)).on('end', () => resolve(text)).on('error', reject);
    }, reject)));
    expect(saved.contact).to.deep.include({ email: 'rhoda@example.com', firstName: 'Rhoda' });
    await page.getByRole('status').filter({ hasText: 'Exported what is kept about rhoda@example.com: 0 messages.' }).waitFor();

    await page.getByRole('button', { name: 'Erase rhoda@example.com' }).click();
    await page.getByText('Their data cannot be read again, by anyone.').waitFor();
    await screenshot(page, 'contacts-erase-confirm');
    await page.getByRole('button', { name: 'Yes, erase for good rhoda@example.com' }).click();
    await page.getByRole('status').filter({ hasText: 'rhoda@example.com is forgotten' }).waitFor();
    expect((await h.app.request('GET', '/api/contacts?search=rhoda', token)).body.items).to.deep.equal([]);
    await expectAccessible(page);
  });

  it('adds, searches and removes suppressions', async () => {
    const { page } = h;
    await page.goto('/suppressions');
    await page.getByLabel('Email or phone').fill('blocked@example.com');
    await page.getByLabel('Reason').fill('asked by phone');
    await page.getByRole('button', { name: 'Add suppression' }).click();
    await page.getByRole('cell', { name: 'blocked@example.com', exact: true }).waitFor();
    // what was typed as the reason is shown beside the kind of entry it is
    await page.getByRole('cell', { name: 'manual asked by phone' }).waitFor();
    await page.getByLabel('Email or phone').fill('other@example.com');
    await page.getByRole('button', { name: 'Add suppression' }).click();
    await page.getByRole('cell', { name: 'other@example.com', exact: true }).waitFor();
    await page.getByRole('searchbox', { name: 'Search' }).fill('blocked');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.waitForURL(/search=blocked/);
    await eventually(async () => page.getByRole('cell', { name: 'other@example.com', exact: true }).count(), (n) => n === 0);
    await expectAccessible(page);
    await screenshot(page, 'suppressions');
    // lifting a suppression asks first: sends to the address go out again
    await page.getByRole('button', { name: 'Remove blocked@example.com' }).click();
    await page.getByText('Sends to it go out again.').waitFor();
    await screenshot(page, 'suppressions-remove-confirm');
    await page.getByRole('button', { name: 'Yes, remove blocked@example.com' }).click();
    await page.getByText('Nothing is suppressed that matches.').waitFor();
    const api = await h.app.request('GET', '/api/suppressions', { token: h.app.adminToken });
    expect(api.body.items.map((s: { email: string }) => s.email)).to.deep.equal(['other@example.com']);
  });

  it("imports another provider's suppression list with progress, exports ours as a file, and takes that file back", async () => {
    const { page } = h;
    // Postmark's export: its own header names and reasons; one address twice (one row per message stream)
    const rows = ['Email Address,SuppressionReason,Origin,CreatedAt'];
    for (let i = 0; i < 60; i++) rows.push(`moved${i}@example.com,${i % 3 === 0 ? 'HardBounce' : i % 3 === 1 ? 'SpamComplaint' : 'ManualSuppression'},Recipient,2026-01-01T00:00:00Z`);
    rows.push('moved0@example.com,HardBounce,Recipient,2026-01-01T00:00:00Z', 'not-an-address,HardBounce,Recipient,', 'odd@example.com,Blocked,Admin,');
    await page.goto('/suppressions');
    // webhooks are told by default; a list they know already can come in quietly
    expect(await page.getByLabel('Tell my webhooks (contact.suppressed for each new entry)').isChecked()).to.equal(true);
    await page.getByLabel('CSV file').setInputFiles({ name: 'postmark-suppressions.csv', mimeType: 'text/csv', buffer: Buffer.from(rows.join('\n')) });
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByText('Imported 62 of 63 entries: 61 newly suppressed, 1 already suppressed.').waitFor();
    expect(await page.getByRole('progressbar').getAttribute('value')).to.equal('63');
    const alert = page.getByRole('alert').filter({ hasText: '1 row was not imported' });
    expect(await alert.getByRole('listitem').textContent()).to.match(/^Line 63 \(not-an-address\): email: .+/);
    await page.getByRole('cell', { name: 'moved59@example.com', exact: true }).waitFor();
    await expectAccessible(page);
    await screenshot(page, 'suppressions-import');
    const token = { token: h.app.adminToken };
    const entry = async (q: string) => (await h.app.request('GET', `/api/suppressions?search=${q}`, token)).body.items[0];
    expect(await entry('moved0@')).to.include({ reason: 'bounced', source: 'import' });
    expect(await entry('moved1@')).to.include({ reason: 'complained', source: 'import' });
    expect(await entry('moved2@')).to.include({ reason: 'manual', source: 'import' });
    // a reason we have no word for is kept as the entry's detail
    expect(await entry('odd@')).to.include({ reason: 'manual', detail: 'reason at the source: Blocked' });

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export all as CSV' }).click()]);
    expect(download.suggestedFilename()).to.match(/^suppressions-\d{4}-\d{2}-\d{2}\.csv$/);
    const file = await new Promise<Buffer>((resolve, reject) =>
      download.createReadStream().then((s) => {
        const chunks: Buffer[] = [];
        s.on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve(Buffer.concat(chunks))).on('error', reject);
      }, reject),
    );
    const lines = file.toString('utf8').trim().split('\r\n');
    expect(lines[0]).to.equal('email,phone,person,reason,source,detail,messageId,campaignId,createdAt');
    expect(lines.filter((l) => l.startsWith('moved'))).to.have.length(60);

    // our own file comes back as it went, quietly: every entry is there already
    await page.getByLabel('CSV file').setInputFiles({ name: 'ours.csv', mimeType: 'text/csv', buffer: file });
    await page.getByLabel('Tell my webhooks (contact.suppressed for each new entry)').uncheck();
    const [sent] = await Promise.all([page.waitForRequest((r) => r.url().endsWith('/api/suppressions/import')), page.getByRole('button', { name: 'Import' }).click()]);
    expect(sent.postDataJSON().notify).to.equal(false);
    await page.getByText(`Imported ${lines.length - 1} of ${lines.length - 1} entries: 0 newly suppressed, ${lines.length - 1} already suppressed.`).waitFor();
  });

  it("shows an erased person's suppression without an address, and offers no Remove for it", async () => {
    const { page } = h;
    const key = (await h.app.createApiKey(['contacts:write'])).key;
    expect((await h.app.request('POST', '/api/suppressions', { token: h.app.adminToken, body: { email: 'forget.me@example.com' } })).status).to.equal(201);
    expect((await h.app.request('DELETE', '/api/contacts/forget.me@example.com?erase=true', { apiKey: key })).status).to.equal(200);
    type Entry = { email: string | null; person?: string };
    const listed: Entry[] = await eventually(
      async () => (await h.app.request('GET', '/api/suppressions', { token: h.app.adminToken })).body.items,
      (items: Entry[]) => items.some((s) => s.email === null),
    );
    const person = listed.find((s) => s.email === null)!.person!;
    await page.goto('/suppressions');
    const row = page.getByRole('row').filter({ hasText: 'erased person' });
    await row.waitFor();
    expect(await row.getByRole('code').textContent()).to.equal(`${person.slice(0, 12)}…`);
    expect(await row.getByRole('button').count()).to.equal(0);
    await expectAccessible(page);
    await screenshot(page, 'suppressions-erased');
  });
  it('imports a CSV of one column, addresses only, on both pages; a quote left open is still refused', async () => {
    const { page } = h;
    const onlyAddresses = Buffer.from('email\nsolo1@one-column.example\nsolo2@one-column.example\n');
    await page.goto('/contacts');
    await page.getByLabel('CSV file').setInputFiles({ name: 'addresses.csv', mimeType: 'text/csv', buffer: onlyAddresses });
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByText('Imported 2 of 2 contacts: 2 created').waitFor();
    await screenshot(page, 'contacts-import-one-column');
    const imported = await h.app.request('GET', '/api/contacts?search=one-column.example', { token: h.app.adminToken });
    expect(imported.body.items.map((c: { email: string }) => c.email).sort()).to.deep.equal(['solo1@one-column.example', 'solo2@one-column.example']);

    await page.goto('/suppressions');
    await page.getByLabel('CSV file').setInputFiles({ name: 'addresses.csv', mimeType: 'text/csv', buffer: onlyAddresses });
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByText('Imported 2 of 2 entries: 2 newly suppressed, 0 already suppressed.').waitFor();
    await screenshot(page, 'suppressions-import-one-column');

    await page.getByLabel('CSV file').setInputFiles({ name: 'broken.csv', mimeType: 'text/csv', buffer: Buffer.from('email\n"open@one-column.example\n') });
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByText(/^The CSV could not be read: .*Quoted field unterminated$/).waitFor();
  });
  it('reports a refused row by its line in the file, counting blank lines, rows of commas and quoted cells over two lines', async () => {
    const { page } = h;
    const contacts = ['email,firstName,company', '', 'lines1@example.net,Ann,"Two', 'lines, Inc."', ',,', '', 'not-an-email,Bad,', 'lines2@example.net,Bo,'].join('\n');
    await page.goto('/contacts');
    await page.getByLabel('CSV file').setInputFiles({ name: 'gaps.csv', mimeType: 'text/csv', buffer: Buffer.from(contacts) });
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByText('Imported 2 of 3 contacts: 2 created').waitFor();
    const refused = page.getByRole('alert').filter({ hasText: '1 row was not imported' });
    expect(await refused.getByRole('listitem').textContent()).to.match(/^Line 7 \(not-an-email\): .+/);
    await screenshot(page, 'contacts-import-line-numbers');

    const suppressions = ['email,reason,detail', '"lines3@example.net",bounced,"first', 'second"', ' , , ', '', ',manual,no address', 'not-an-address,manual,'].join('\r\n');
    await page.goto('/suppressions');
    await page.getByLabel('CSV file').setInputFiles({ name: 'gaps.csv', mimeType: 'text/csv', buffer: Buffer.from(suppressions) });
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByText('Imported 1 of 2 entries').waitFor();
    const skipped = page.getByRole('alert').filter({ hasText: '2 rows were not imported' });
    expect(await skipped.getByRole('listitem').allTextContents()).to.satisfy((items: string[]) => items[0] === 'Line 6: no email or phone' && /^Line 7 \(not-an-address\): .+/.test(items[1]));
    await screenshot(page, 'suppressions-import-line-numbers');
  });
  it('reports a duplicate address by the line it repeats, within a batch and across batches', async () => {
    const { page } = h;
    const rows = ['email,firstName'];
    for (let i = 0; i < 700; i++) rows.push(`dup${i}@d.example,D${i}`);
    // line 20 repeats line 10 (the same request), line 652 repeats line 512 (the batch before it)
    rows[19] = 'DUP8@d.example,Again';
    rows[651] = 'dup510@d.example,Again';
    await page.goto('/contacts');
    await page.getByLabel('CSV file').setInputFiles({ name: 'dups.csv', mimeType: 'text/csv', buffer: Buffer.from(rows.join('\n')) });
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByText('Imported 698 of 698 contacts: 698 created').waitFor();
    const refused = page.getByRole('alert').filter({ hasText: '2 rows were not imported' });
    expect(await refused.getByRole('listitem').allTextContents()).to.deep.equal(['Line 20 (DUP8@d.example): duplicate of line 10', 'Line 652 (dup510@d.example): duplicate of line 512']);
    const first = await h.app.request('GET', '/api/contacts?search=dup510@d.example', { token: h.app.adminToken });
    expect(first.body.items[0]).to.deep.include({ email: 'dup510@d.example', firstName: 'D510' });
    await screenshot(page, 'contacts-import-duplicates');
  });
});
