import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually, readyToSend, switchProvider } from '../support/email-setup.js';
import { providerEventsClient } from '../support/provider-events-app.js';
import { postmark } from '../support/provider-events-payloads.js';
import { startPostmarkApi, type PostmarkApi } from '../support/provider-events-postmark-api.js';
import { startWebhookSink, type WebhookSink } from '../support/provider-events-webhook-sink.js';

const HOOK_AUTH = `Basic ${Buffer.from('pm-hook:pm-secret-password').toString('base64')}`;

describe('GET/POST/DELETE /api/suppressions and the events suppressions fire', function () {
  this.timeout(60_000);
  let app: TestApp;
  let sink: WebhookSink;
  let api: PostmarkApi;
  let sender: { key: string; from: string };
  let client: ReturnType<typeof providerEventsClient>;

  const suppress = (body: unknown, token = app.adminToken) => app.request('POST', '/api/suppressions', { token, body });
  const lift = (value: string, token = app.adminToken) => app.request('DELETE', `/api/suppressions/${encodeURIComponent(value)}`, { token });
  const list = (query = '', token = app.adminToken) => app.request('GET', `/api/suppressions${query}`, { token });
  const send = (to: string) =>
    app.request('POST', '/api/send/transactional', { apiKey: sender.key, body: { to, fromEmail: sender.from, subject: 'Hi', html: '<p>Hi</p>', text: 'Hi' } });
  const contact = async (email: string, firstName: string) => {
    const res = await app.request('POST', '/api/contacts', { token: app.adminToken, body: { email, firstName, lastName: 'Tester' } });
    expect(res.status).to.equal(201);
    return res.body.id as string;
  };
  const contactStatus = (email: string, status: string) =>
    eventually(
      async () => ((await app.request('GET', `/api/contacts?search=${encodeURIComponent(email)}`, { token: app.adminToken })).body?.items ?? []).find((c: any) => c.email === email),
      (c: any) => c?.status === status,
    );
  const webhookFor = async (email: string, event: string) =>
    (await eventually(
      async () => sink.received.find((r) => r.event === event && r.body?.data?.email === email),
      Boolean,
      20_000,
    ))!;

  before(async () => {
    sink = await startWebhookSink();
    // Postmark's events count only for messages sent through Postmark: the account sends through a local one
    api = await startPostmarkApi();
    app = await startTestApp({
      POSTMARK_WEBHOOK_USER: 'pm-hook',
      POSTMARK_WEBHOOK_PASSWORD: 'pm-secret-password',
      POSTMARK_SERVER_TOKEN: 'server-token',
      POSTMARK_API_URL: api.url,
    });
    sender = await readyToSend(app);
    await switchProvider(app, 'postmark');
    client = providerEventsClient(app, sender);
    const hook = await app.request('POST', '/api/webhooks', { token: app.adminToken, body: { url: sink.url } });
    expect(hook.status, JSON.stringify(hook.body)).to.equal(201);
  });
  after(async () => {
    await app?.close();
    await sink?.close();
    await api?.close();
  });

  it('a manual add answers 201 with the entry, blocks sends, sets the contact suppressed and fires contact.suppressed (source manual)', async () => {
    const contactId = await contact('manual@example.org', 'Manny');
    const res = await suppress({ email: 'Manual@Example.org', reason: 'asked by phone' });
    expect(res.status).to.equal(201);
    expect(res.body).to.include({ email: 'manual@example.org', reason: 'manual', source: 'manual', detail: 'asked by phone', messageId: null, campaignId: null });
    expect(Date.parse(res.body.createdAt)).to.be.closeTo(Date.now(), 60_000);

    const again = await suppress({ email: 'manual@example.org', reason: 'second time' });
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.equal(res.body);

    expect((await send('manual@example.org')).body.message).to.equal('manual@example.org is suppressed');
    await contactStatus('manual@example.org', 'suppressed');
    const hook = await webhookFor('manual@example.org', 'contact.suppressed');
    expect(hook.body).to.include({ event: 'contact.suppressed', accountId: (await client.suppressionEvents('manual@example.org'))[0].data.accountId });
    expect(hook.body.data).to.deep.equal({ email: 'manual@example.org', source: 'manual', contactId, firstName: 'Manny', lastName: 'Tester', campaignId: null });
    // one AddressSuppressed, however many times it was added
    expect((await client.suppressionEvents('manual@example.org')).map((e) => e.type)).to.deep.equal(['AddressSuppressed']);
  });

  it('DELETE lifts it: gone from the list, sending works, the contact is subscribed again; a second DELETE is 404', async () => {
    await contact('lifted@example.org', 'Lee');
    expect((await suppress({ email: 'lifted@example.org' })).status).to.equal(201);
    await contactStatus('lifted@example.org', 'suppressed');
    const res = await lift('Lifted@example.org');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ email: 'lifted@example.org', lifted: true });
    expect((await list('?search=lifted')).body.items).to.deep.equal([]);
    expect((await send('lifted@example.org')).status).to.equal(201);
    await contactStatus('lifted@example.org', 'subscribed');
    const missing = await lift('lifted@example.org');
    expect(missing.status).to.equal(404);
    expect(missing.body).to.deep.equal({ message: 'lifted@example.org is not suppressed', error: 'Not Found', statusCode: 404 });
    // suppressing again after a lift is a new suppression, and fires again
    expect((await suppress({ email: 'lifted@example.org' })).status).to.equal(201);
    expect((await client.suppressionEvents('lifted@example.org')).map((e) => e.type)).to.deep.equal(['AddressSuppressed', 'SuppressionLifted', 'AddressSuppressed']);
    await eventually(async () => sink.received.filter((r) => r.body?.data?.email === 'lifted@example.org'), (r) => r.length === 2);
  });

  it('phone numbers are stored in E.164 and lifted by that value', async () => {
    const res = await suppress({ phone: '(415) 555-2671' });
    expect(res.status).to.equal(201);
    expect(res.body).to.include({ phone: '+14155552671', reason: 'manual', source: 'manual' });
    expect((await list('?search=4155552671')).body.items.map((i: any) => i.phone)).to.deep.equal(['+14155552671']);
    expect((await lift('+14155552671')).body).to.deep.equal({ phone: '+14155552671', lifted: true });
    const bad = await suppress({ phone: '12' });
    expect(bad.status).to.equal(400);
    expect(bad.body.message).to.equal('12 is not a valid phone number');
  });

  it('400 for a body that is not exactly one valid email or phone, or has unknown fields', async () => {
    for (const body of [{}, { email: 'a@example.org', phone: '+14155552671' }, { email: 'not-an-email' }, { email: 'a@example.org', surprise: 1 }, 'x']) {
      const res = await suppress(body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body).to.include({ error: 'Bad Request', statusCode: 400 });
    }
  });

  it('lists newest first with search and an opaque cursor, one account only; 400 for limit > 100 or a bad cursor', async () => {
    const signup = await app.request('POST', '/api/auth/signup', { body: { accountName: 'Lister', email: 'owner@lister.example', password: 'lister-password' } });
    const token = signup.body.token;
    const emails = ['l1@lister.example', 'l2@lister.example', 'l3@lister.example', 'other@elsewhere.example', 'l4@lister.example'];
    for (const email of emails) expect((await suppress({ email }, token)).status).to.equal(201);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await list(`?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, token);
      expect(page.status).to.equal(200);
      expect(page.body.items.length).to.be.at.most(2);
      seen.push(...page.body.items.map((i: any) => i.email));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).to.deep.equal([...emails].reverse());

    const found = await list('?search=LISTER', token);
    expect(found.body.items.map((i: any) => i.email)).to.deep.equal(['l4@lister.example', 'l3@lister.example', 'l2@lister.example', 'l1@lister.example']);
    expect(found.body.nextCursor).to.equal(null);
    // the default account sees none of these, and cannot lift them
    expect((await list('?search=lister')).body.items).to.deep.equal([]);
    expect((await lift('l1@lister.example')).status).to.equal(404);

    expect((await list('?limit=101', token)).status).to.equal(400);
    expect((await list('?cursor=not-a-cursor', token)).status).to.equal(400);
  });

  it('an API key never reaches the suppressions API', async () => {
    const res = await app.request('GET', '/api/suppressions', { apiKey: sender.key });
    expect([401, 403]).to.include(res.status);
    expect((await app.request('POST', '/api/suppressions', { apiKey: sender.key, body: { email: 'k@example.org' } })).status).to.be.oneOf([401, 403]);
    expect((await app.request('GET', '/api/suppressions')).status).to.equal(401);
  });

  describe('every way an address gets suppressed fires its event with its source and sets the contact status', () => {
    const postmarkHook = (body: unknown) => app.request('POST', '/api/provider-events/postmark', { body, headers: { authorization: HOOK_AUTH } });

    it('a hard bounce: contact.bounced, source bounce, status bounced', async () => {
      const contactId = await contact('bounce@example.org', 'Bo');
      const m = await client.sendAccepted('bounce@example.org');
      await postmarkHook(postmark.bounce({ msgId: m.id, postmarkMessageId: m.providerMessageId, recipient: 'bounce@example.org', id: 7001, type: 'HardBounce', inactive: true }));
      const hook = await webhookFor('bounce@example.org', 'contact.bounced');
      expect(hook.body.data).to.include({ source: 'bounce', contactId, firstName: 'Bo' });
      await contactStatus('bounce@example.org', 'bounced');
      expect((await list('?search=bounce@')).body.items[0]).to.include({ email: 'bounce@example.org', reason: 'bounced', source: 'bounce', messageId: m.id });
    });

    it('a complaint: contact.complained, source complaint, status complained', async () => {
      await contact('complaint@example.org', 'Cy');
      const m = await client.sendAccepted('complaint@example.org');
      await postmarkHook(postmark.spamComplaint({ msgId: m.id, postmarkMessageId: m.providerMessageId, recipient: 'complaint@example.org', id: 7002 }));
      const hook = await webhookFor('complaint@example.org', 'contact.complained');
      expect(hook.body.data).to.include({ source: 'complaint', firstName: 'Cy' });
      await contactStatus('complaint@example.org', 'complained');
    });

    it('a complaint about an address already unsubscribed: contact.complained too, and the entry takes the complaint', async () => {
      await contact('later-complaint@example.org', 'Lu');
      const m = await client.sendAccepted('later-complaint@example.org');
      expect((await suppress({ email: 'later-complaint@example.org' })).status).to.equal(201);
      await webhookFor('later-complaint@example.org', 'contact.suppressed');
      await postmarkHook(postmark.spamComplaint({ msgId: m.id, postmarkMessageId: m.providerMessageId, recipient: 'later-complaint@example.org', id: 7003 }));
      const hook = await webhookFor('later-complaint@example.org', 'contact.complained');
      expect(hook.body.data).to.include({ source: 'complaint', firstName: 'Lu' });
      await contactStatus('later-complaint@example.org', 'complained');
      expect((await list('?search=later-complaint@')).body.items[0]).to.include({ reason: 'complained', source: 'complaint', messageId: m.id });
    });

    it('a one-click unsubscribe: contact.unsubscribed, source one_click, status unsubscribed', async () => {
      await contact('unsub@example.org', 'Una');
      const res = await app.request('POST', '/api/send/transactional', {
        apiKey: sender.key,
        body: { to: 'unsub@example.org', fromEmail: sender.from, subject: 'Hi', html: '<p>Hi</p>', text: 'Hi', unsubscribeUrl: 'https://example.com/prefs' },
      });
      const sent: any = await eventually(async () => api.sent.find((b) => b.Metadata?.msg_id === res.body.messageLogId), Boolean);
      const link = /^<(.+)>$/.exec(sent.Headers.find((h: any) => h.Name === 'List-Unsubscribe').Value)![1];
      const click = await fetch(link, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
      expect(click.status).to.equal(200);
      const hook = await webhookFor('unsub@example.org', 'contact.unsubscribed');
      expect(hook.body.data).to.include({ source: 'one_click', firstName: 'Una' });
      await contactStatus('unsub@example.org', 'unsubscribed');
      expect((await send('unsub@example.org')).status).to.equal(400);
    });
  });
});
