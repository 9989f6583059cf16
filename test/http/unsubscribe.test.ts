import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually, readyToSend } from '../support/email-setup.js';

describe('unsubscribe: List-Unsubscribe headers and /u/<token> (RFC 8058)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let key: string;
  let from: string;
  let n = 0;

  /** Sends to a fresh recipient with an unsubscribeUrl and returns the List-Unsubscribe URL it carried. */
  async function sendWithUnsubscribe(to = `reader${++n}@example.org`) {
    const res = await app.request('POST', '/api/send/transactional', {
      apiKey: key,
      body: { to, fromEmail: from, subject: 'News', html: '<p>hi</p>', text: 'hi', unsubscribeUrl: 'https://example.com/prefs?u=1' },
    });
    expect(res.status).to.equal(201);
    const row = await eventually(() => app.infra.db('sandbox_emails').where({ message_id: res.body.messageLogId }).first(), (r) => Boolean(r));
    const header = row.headers.find((h: { name: string }) => h.name === 'List-Unsubscribe').value as string;
    return { to, messageId: res.body.messageLogId as string, url: header.slice(1, -1), headers: row.headers };
  }
  const suppression = async (email: string) =>
    (await app.request('GET', `/api/suppressions?search=${encodeURIComponent(email)}`, { token: app.adminToken })).body.items.find((s: any) => s.email === email);
  const sendTo = (to: string) =>
    app.request('POST', '/api/send/transactional', { apiKey: key, body: { to, fromEmail: from, subject: 's', html: '<p>x</p>', text: 'x' } });

  before(async () => {
    app = await startTestApp();
    ({ key, from } = await readyToSend(app));
  });
  after(async () => app?.close());

  it('carries List-Unsubscribe <{base_url}/u/<token>> and List-Unsubscribe-Post only when unsubscribeUrl is passed', async () => {
    const { url, headers } = await sendWithUnsubscribe();
    expect(url.startsWith(`${app.baseUrl}/u/`)).to.equal(true);
    expect(headers).to.deep.equal([
      { name: 'List-Unsubscribe', value: `<${url}>` },
      { name: 'List-Unsubscribe-Post', value: 'List-Unsubscribe=One-Click' },
    ]);
    const plain = await sendTo('plain@example.org');
    const row = await eventually(() => app.infra.db('sandbox_emails').where({ message_id: plain.body.messageLogId }).first(), (r) => Boolean(r));
    expect(row.headers).to.deep.equal([]);
  });

  it('one-click POST (urlencoded) answers 200 without a redirect, suppresses with source one_click; the next send is refused', async () => {
    const { to, url, messageId } = await sendWithUnsubscribe();
    const res = await fetch(url, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
    expect(res.status).to.equal(200);
    expect(await suppression(to)).to.include({ email: to, reason: 'unsubscribed', source: 'one_click', messageId });
    const next = await sendTo(to);
    expect(next.status).to.equal(400);
    expect(next.body).to.deep.equal({ message: `${to} is suppressed`, error: 'Bad Request', statusCode: 400 });
    // repeats are harmless
    const again = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
    expect(again.status).to.equal(200);
  });

  it('one-click POST as multipart/form-data works the same', async () => {
    const { to, url } = await sendWithUnsubscribe();
    const form = new FormData();
    form.set('List-Unsubscribe', 'One-Click');
    const res = await fetch(url, { method: 'POST', body: form });
    expect(res.status).to.equal(200);
    expect(await suppression(to)).to.include({ source: 'one_click' });
    expect((await sendTo(to)).body.message).to.equal(`${to} is suppressed`);
  });

  it('GET shows a confirmation form and does not unsubscribe; submitting the form does (source form) and links on to the unsubscribeUrl', async () => {
    const { to, url } = await sendWithUnsubscribe();
    const page = await fetch(url);
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.match(/^text\/html/);
    // a page of its own policy: no script at all, its form posts back here only
    const recipientPagePolicy = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";
    expect(page.headers.get('content-security-policy')).to.equal(recipientPagePolicy);
    const body = await page.text();
    expect(body).to.contain('<form method="post"').and.contain(to);
    expect(await suppression(to)).to.equal(undefined);
    expect((await sendTo(to)).status).to.equal(201);

    const submit = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'confirm=yes' });
    expect(submit.status).to.equal(200);
    expect(submit.headers.get('content-security-policy')).to.equal(recipientPagePolicy);
    const done = await submit.text();
    expect(done).to.contain('href="https://example.com/prefs?u=1"');
    expect(await suppression(to)).to.include({ reason: 'unsubscribed', source: 'form' });
    expect((await sendTo(to)).status).to.equal(400);
  });

  it('a forged or altered token is 404 and suppresses nobody', async () => {
    const { to, url, messageId } = await sendWithUnsubscribe();
    const altered = url.slice(0, -2) + (url.endsWith('AA') ? 'BB' : 'AA');
    const forged = `${app.baseUrl}/u/${messageId}.${'x'.repeat(43)}`;
    const noMac = `${app.baseUrl}/u/${messageId}`;
    for (const bad of [altered, forged, noMac]) {
      expect((await fetch(bad)).status, bad).to.equal(404);
      const post = await fetch(bad, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
      expect(post.status, bad).to.equal(404);
    }
    expect(await suppression(to)).to.equal(undefined);
  });

  it('a bad link opened in a browser shows an HTML page saying so (404); an API client still gets the JSON error', async () => {
    const { to, url, messageId } = await sendWithUnsubscribe();
    const browser = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
    const altered = url.slice(0, -2) + (url.endsWith('AA') ? 'BB' : 'AA');
    const overlong = `${app.baseUrl}/u/${messageId}.${'x'.repeat(400)}`;
    const injected = `${app.baseUrl}/u/${encodeURIComponent('<script>alert(1)</script>.x')}`;
    for (const bad of [altered, overlong, injected]) {
      for (const res of [
        await fetch(bad, { headers: browser }),
        // the confirmation form's submit, from a page left open
        await fetch(bad, { method: 'POST', headers: { ...browser, 'content-type': 'application/x-www-form-urlencoded' }, body: 'confirm=yes' }),
      ]) {
        expect(res.status, bad).to.equal(404);
        expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
        expect(res.headers.get('content-security-policy')).to.match(/^default-src 'none';/).and.not.include('script-src');
        const html = await res.text();
        expect(html).to.match(/^<!doctype html>/);
        expect(html).to.include('<h1>This unsubscribe link is not valid</h1>');
        expect(html).not.to.match(/<script/i);
        expect(html).not.to.include(messageId);
      }
      for (const headers of [{}, { accept: 'application/json' }, { accept: '*/*' }] as Record<string, string>[]) {
        const res = await fetch(bad, { headers });
        expect(res.status, bad).to.equal(404);
        expect(await res.json()).to.deep.equal({ message: 'Not Found', error: 'Not Found', statusCode: 404 });
      }
      // a one-click POST comes from a mail client, never a person: always JSON
      const oneClick = await fetch(bad, { method: 'POST', headers: { ...browser, 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
      expect(oneClick.status).to.equal(404);
      expect(oneClick.headers.get('content-type')).to.match(/^application\/json/);
    }
    expect(await suppression(to)).to.equal(undefined);
  });
});
