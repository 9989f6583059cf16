import { expect } from 'chai';
import Papa from 'papaparse';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually, readyToSend } from '../support/email-setup.js';
import { startWebhookSink, type WebhookSink } from '../support/provider-events-webhook-sink.js';

describe('POST /api/suppressions/import and /export: a suppression list brought and taken away', function () {
  this.timeout(120_000);
  let app: TestApp;
  let sink: WebhookSink;
  let sender: { key: string; from: string };

  const importing = (entries: unknown[], token = app.adminToken) => app.request('POST', '/api/suppressions/import', { token, body: { entries } });
  const exported = async () => {
    const res = await app.request('POST', '/api/suppressions/export', { token: app.adminToken });
    expect(res.status, String(res.body)).to.equal(200);
    const parsed = Papa.parse<Record<string, string>>(res.body as string, { header: true, skipEmptyLines: true });
    expect(parsed.errors).to.deep.equal([]);
    return { res, rows: parsed.data, fields: parsed.meta.fields };
  };
  const send = (to: string) =>
    app.request('POST', '/api/send/transactional', { apiKey: sender.key, body: { to, fromEmail: sender.from, subject: 'Hi', html: '<p>Hi</p>', text: 'Hi' } });

  before(async () => {
    sink = await startWebhookSink();
    app = await startTestApp();
    sender = await readyToSend(app);
    expect((await app.request('POST', '/api/webhooks', { token: app.adminToken, body: { url: sink.url } })).status).to.equal(201);
  });
  after(async () => {
    await app?.close();
    await sink?.close();
  });

  it('suppresses the valid entries, lists the bad ones by index, and refuses sends to the imported at once', async () => {
    const res = await importing([
      { email: 'Old.Bounce@Example.org', reason: 'bounced', detail: 'HardBounce at the old provider' },
      { email: 'old.complaint@example.org', reason: 'complained' },
      { phone: '+14155550123' },
      { email: 'not an address' },
      { email: 'old.bounce@example.org', reason: 'manual' },
      { email: 'unsub@example.org', reason: 'sms_optout' },
    ]);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body).to.deep.include({ total: 6, suppressed: 3, alreadySuppressed: 1 });
    expect(res.body.errors.map((e: any) => [e.index, e.value])).to.deep.equal([
      [3, 'not an address'],
      [5, 'unsub@example.org'],
    ]);
    // the answer comes once the list shows them: the next send is refused
    expect((await send('old.bounce@example.org')).body.message).to.equal('old.bounce@example.org is suppressed');
    const entry = (await app.request('GET', '/api/suppressions?search=old.bounce', { token: app.adminToken })).body.items[0];
    expect(entry).to.include({ email: 'old.bounce@example.org', reason: 'bounced', source: 'import', detail: 'HardBounce at the old provider' });
  });

  it('fires contact.suppressed (source import) for an imported bounce: no provider of ours reported it', async () => {
    const hook = await eventually(async () => sink.received.find((r) => r.body?.data?.email === 'old.bounce@example.org'), Boolean, 20_000);
    expect(hook!.event).to.equal('contact.suppressed');
    // an admin's act through the API: `manual`, one of the sources receivers are promised
    expect(hook!.body.data).to.include({ email: 'old.bounce@example.org', source: 'manual' });
  });

  it('a quiet import (notify: false) suppresses and tells no webhook', async () => {
    const quiet = await app.request('POST', '/api/suppressions/import', { token: app.adminToken, body: { entries: [{ email: 'quiet@example.org' }], notify: false } });
    expect(quiet.body).to.include({ suppressed: 1 });
    expect((await send('quiet@example.org')).body.message).to.equal('quiet@example.org is suppressed');
    // an entry imported after it is told: by then the quiet one has been passed over
    await importing([{ email: 'told@example.org' }]);
    await eventually(async () => sink.received.find((r) => r.body?.data?.email === 'told@example.org'), Boolean, 20_000);
    await new Promise((r) => setTimeout(r, 500));
    expect(sink.received.filter((r) => r.body?.data?.email === 'quiet@example.org')).to.deep.equal([]);
  });

  it('the same import again suppresses nothing new, and an address already suppressed keeps its entry', async () => {
    expect((await app.request('POST', '/api/suppressions', { token: app.adminToken, body: { email: 'by-hand@example.org', reason: 'asked us' } })).status).to.equal(201);
    const res = await importing([{ email: 'old.bounce@example.org', reason: 'complained' }, { email: 'by-hand@example.org', reason: 'bounced' }, { phone: '4155550123' }]);
    expect(res.body).to.deep.equal({ total: 3, suppressed: 0, alreadySuppressed: 3 });
    const byHand = (await app.request('GET', '/api/suppressions?search=by-hand', { token: app.adminToken })).body.items[0];
    expect(byHand).to.include({ reason: 'manual', source: 'manual', detail: 'asked us' });
  });

  it(`refuses more than 1,000 entries a request, a body that is no list, and an API key`, async () => {
    const many = Array.from({ length: 1001 }, (_, i) => ({ email: `many${i}@example.org` }));
    const tooMany = await importing(many);
    expect(tooMany.status).to.equal(400);
    expect(tooMany.body.message).to.equal('entries: at most 1000 entries per request (got 1001)');
    expect((await app.request('POST', '/api/suppressions/import', { token: app.adminToken, body: { entries: 'x@example.org' } })).status).to.equal(400);
    const key = await app.createApiKey(['send', 'contacts:write']);
    // the list is the dashboard's: an API key, whatever its scopes, is refused
    expect((await app.request('POST', '/api/suppressions/import', { apiKey: key.key, body: { entries: [] } })).status).to.equal(403);
    expect((await app.request('POST', '/api/suppressions/export', { apiKey: key.key })).status).to.equal(403);
  });

  it('exports the whole list as CSV over several pages, newest first, an erased person by keyed hash only', async () => {
    // more than a page of the export (500)
    const bulk = Array.from({ length: 500 }, (_, i) => ({ email: `bulk${String(i).padStart(4, '0')}@example.org`, reason: 'unsubscribed' }));
    expect((await importing(bulk)).body).to.include({ suppressed: 500 });
    expect((await app.request('DELETE', '/api/contacts/old.complaint@example.org?erase=true', { token: app.adminToken })).status).to.equal(200);

    const { res, rows, fields } = await exported();
    expect(res.headers.get('content-type')).to.equal('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).to.match(/^attachment; filename="suppressions-\d{4}-\d{2}-\d{2}\.csv"$/);
    expect(fields).to.deep.equal(['email', 'phone', 'person', 'reason', 'source', 'detail', 'messageId', 'campaignId', 'createdAt']);
    expect(rows).to.have.length(500 + 6);
    expect(new Set(rows.map((r) => r.email || r.phone || r.person)).size).to.equal(rows.length);
    const times = rows.map((r) => Date.parse(r.createdAt));
    expect(times).to.deep.equal([...times].sort((a, b) => b - a));
    expect(rows.find((r) => r.phone)).to.include({ phone: '+14155550123', email: '', reason: 'manual', source: 'import' });
    const erased = rows.filter((r) => r.person);
    expect(erased).to.have.length(1);
    expect(erased[0]).to.include({ email: '', reason: 'complained' });
    expect(res.body).not.to.include('old.complaint@example.org');
  });

  it('defuses a cell a spreadsheet would run as a formula; an E.164 number stays as it is', async () => {
    await importing([{ email: 'formula@example.org', detail: '=HYPERLINK("http://evil.example","click")' }, { email: 'at@example.org', detail: '@SUM(1)' }]);
    const { res, rows } = await exported();
    expect(rows.find((r) => r.email === 'formula@example.org')!.detail).to.equal(`'=HYPERLINK("http://evil.example","click")`);
    expect(rows.find((r) => r.email === 'at@example.org')!.detail).to.equal(`'@SUM(1)`);
    expect(res.body).to.include(',+14155550123,');
  });

  it('records each import and export in the audit trail as one entry, by whom and from where, with the entries it moved', async () => {
    const res = await eventually(
      () => app.request('GET', '/api/audit?limit=100', { token: app.adminToken }),
      (r) => r.body.items.filter((i: any) => i.action === 'suppressions.exported').length === 2,
    );
    const items: any[] = res.body.items;
    expect(items.filter((i) => i.action === 'suppressions.imported').map((i) => i.changes.entries.to)).to.deep.equal([2, 500, 3, 1, 1, 6]);
    expect(items.filter((i) => i.action === 'suppressions.exported').map((i) => i.changes.entries.to)).to.deep.equal([508, 506]);
    for (const entry of items.filter((i) => i.action.startsWith('suppressions.'))) {
      expect(entry).to.deep.include({ ip: '127.0.0.1', target: { type: 'account', id: entry.target.id } });
      expect(entry.actor.type).to.equal('user');
    }
    // the entries themselves are the import's, not actions of their own
    expect(items.filter((i) => i.target.type === 'suppression').map((i) => i.action)).to.deep.equal(['suppression.added']);
  });

  it("pages the list past an erased person's entry (it has no address to page by)", async () => {
    // every entry, 7 a page: the erased one ends some page or sits inside one
    const seen: string[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const page: any = await app.request('GET', `/api/suppressions?limit=7${cursor ? `&cursor=${cursor}` : ''}`, { token: app.adminToken });
      expect(page.status, JSON.stringify(page.body)).to.equal(200);
      seen.push(...page.body.items.map((i: any) => i.email ?? i.phone ?? i.person));
      cursor = page.body.nextCursor;
    }
    expect(seen).to.have.length(500 + 8);
    expect(new Set(seen).size).to.equal(seen.length);
  });
});
