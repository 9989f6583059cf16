import { expect } from 'chai';
import { retentionOf } from '../support/retention.js';
import { getOrCreateSecret } from '../../src/adapters/db/secrets.js';
import { createUnsubscribeToken } from '../../src/domain/email/unsubscribe-token.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually, readyToSend } from '../support/email-setup.js';
import { queueDirect, untilSent } from '../support/messages-http.js';
import { startScriptedReceiver, webhookClient } from '../support/webhook-receiver.js';

const DAY = 86_400_000;

/**
 * An unsubscribe link lives as long as its message in the recipient's mailbox; the service may have
 * forgotten the address by then (erased, or the message past the account's retention). The link
 * must still stop the mail, and must not answer a 500.
 */
describe('unsubscribe links of messages whose recipient is no longer on record', function () {
  this.timeout(120_000);
  let app: TestApp;
  let sender: { key: string; from: string };
  let accountId: string;

  before(async () => {
    app = await startTestApp();
    sender = await readyToSend(app, { scopes: ['send', 'read_events', 'contacts:write'] });
    accountId = (await app.infra.db('accounts').first('id')).id;
  });
  after(async () => app?.close());

  const suppressions = async () => (await app.request('GET', '/api/suppressions?limit=100', { token: app.adminToken })).body.items as any[];
  const oneClick = (url: string) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
  const sendTo = (to: string) =>
    app.request('POST', '/api/send/transactional', { apiKey: sender.key, body: { to, fromEmail: sender.from, subject: 's', html: '<p>x</p>', text: 'x' } });

  /** Sends to `address` with an unsubscribe link, erases the person and waits for the read model to show it; the message and its /u/ link. */
  async function sentThenErased(address: string) {
    const sent = await app.request('POST', '/api/send/transactional', {
      apiKey: sender.key,
      body: { to: address, fromEmail: sender.from, subject: 'News', html: '<p>hi</p>', text: 'hi', unsubscribeUrl: 'https://example.com/prefs' },
    });
    const row = await eventually(() => app.infra.db('sandbox_emails').where({ message_id: sent.body.messageLogId }).first(), (r) => Boolean(r));
    const url = (row.headers.find((h: { name: string }) => h.name === 'List-Unsubscribe').value as string).slice(1, -1);
    expect((await app.request('DELETE', `/api/contacts/${address}?erase=true`, { apiKey: sender.key })).status).to.equal(200);
    await eventually(() => app.infra.db('messages').where({ id: sent.body.messageLogId }).first('to_address'), (r) => r.to_address === null);
    return { sent, url };
  }

  it('an erased recipient: the page names no address, and unsubscribing suppresses the keyed hash, so a later send is refused', async () => {
    const address = 'gone.reader@example.org';
    const { sent, url } = await sentThenErased(address);

    const page = await fetch(url, { headers: { accept: 'text/html' } });
    expect(page.status).to.equal(200);
    const html = await page.text();
    expect(html).to.include('Stop emails to this address?').and.not.include('gone.reader');

    expect((await oneClick(url)).status).to.equal(200);
    const entry = (await suppressions()).find((s) => s.messageId === sent.body.messageLogId);
    expect(entry).to.include({ email: null, reason: 'unsubscribed', source: 'one_click' });
    expect(entry.person).to.be.a('string').and.not.include('gone');
    const again = await sendTo(address);
    expect(again.status).to.equal(400);
    expect(again.body.message).to.equal(`${address} is suppressed`);

    // the confirmation form of the same link answers in words, without the address
    const form = await fetch(url, { method: 'POST', headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' }, body: 'confirm=yes' });
    expect(form.status).to.equal(200);
    expect(await form.text()).to.include('This address will receive no more email from this sender.');
  });

  it('an erased recipient added again as a contact: the old link names no one and joins no one (suppressed by keyed hash, no webhook)', async () => {
    const address = 'back.again@example.org';
    const receiver = await startScriptedReceiver([200]);
    const hooks = webhookClient(app);
    const hook = await hooks.subscribe(receiver.hook);
    try {
      const { sent, url } = await sentThenErased(address);
      // the same address comes back: a new person, whom the erased message was not sent to
      const readded = await app.request('POST', '/api/contacts', { apiKey: sender.key, body: { email: address, firstName: 'Returnia' } });
      expect(readded.status).to.equal(201);

      const html = await (await fetch(url, { headers: { accept: 'text/html' } })).text();
      expect(html).to.include('Stop emails to this address?').and.not.include('back.again').and.not.include('Returnia');
      expect((await oneClick(url)).status).to.equal(200);
      const entry = (await suppressions()).find((s) => s.messageId === sent.body.messageLogId);
      expect(entry).to.include({ email: null, reason: 'unsubscribed', source: 'one_click' });

      // a suppression after it (a control) is delivered once any delivery of the unsubscribe would be
      const [unsubscribed] = await app.infra.eventStore.readStream(`suppression-${accountId}-${app.infra.privacy.personOf(address)}`);
      await hooks.suppress('control.after@example.org');
      const deliveries = await eventually(() => hooks.deliveries(hook.id), (items) => items.some((d) => d.event === 'contact.suppressed'));
      expect(deliveries.filter((d) => d.eventId === unsubscribed.id || d.event === 'contact.unsubscribed')).to.deep.equal([]);
    } finally {
      await hooks.call('DELETE', `/api/webhooks/${hook.id}`);
      await receiver.close();
    }
  });

  it("a message past the account's retention: the contact's address is unsubscribed, as it would have been before", async () => {
    const address = 'old.reader@example.org';
    expect((await app.request('POST', '/api/contacts', { apiKey: sender.key, body: { email: address, firstName: 'Olga' } })).status).to.equal(201);
    const old = await queueDirect(app, { accountId, to: address, unsubscribeUrl: 'https://example.com/prefs', queuedAt: new Date(Date.now() - 41 * DAY).toISOString() });
    await untilSent(app, [old]);
    expect((await app.request('PATCH', '/api/settings', { token: app.adminToken, body: { retentionDays: 30 } })).status).to.equal(200);
    expect((await retentionOf(app).apply()).keys).to.be.greaterThan(0);
    await eventually(() => app.infra.db('messages').where({ id: old }).first('to_address'), (r) => r.to_address === null);

    const url = `${app.baseUrl}/u/${createUnsubscribeToken(await getOrCreateSecret(app.infra.db, 'links'), old)}`;
    expect(await (await fetch(url, { headers: { accept: 'text/html' } })).text()).to.include(`Stop emails to <strong>${address}</strong>?`);
    expect((await oneClick(url)).status).to.equal(200);
    expect((await suppressions()).find((s) => s.messageId === old)).to.include({ email: address, reason: 'unsubscribed', source: 'one_click' });
    const contact = await app.request('GET', `/api/contacts?search=${address}`, { token: app.adminToken });
    expect(contact.body.items[0]).to.include({ email: address, status: 'unsubscribed' });
  });
});
