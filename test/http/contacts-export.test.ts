import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually, readyToSend } from '../support/email-setup.js';
import { readyToSendSms } from '../support/sms-setup.js';

/**
 * A person asks what is kept about them (a subject access request): the admin exports it in one
 * answer, and the export itself is in the audit trail without the address in clear.
 */
describe('POST /api/contacts/:email/export: everything kept about a person', function () {
  this.timeout(60_000);
  let app: TestApp;
  let sender: { key: string; from: string };
  const ADDRESS = 'Petra.Portable@example.org';
  const exportOf = (email: string, token = app.adminToken) => app.request('POST', `/api/contacts/${encodeURIComponent(email)}/export`, { token });
  const send = (to: string, subject: string) =>
    app.request('POST', '/api/send/transactional', { apiKey: sender.key, body: { to, fromEmail: sender.from, subject, html: `<p>${subject} body</p>`, text: `${subject} body` } });

  before(async () => {
    app = await startTestApp();
    sender = await readyToSend(app);
  });
  after(async () => app?.close());

  it('holds the contact, the suppression and every message to the address with its whole history, bodies included', async () => {
    await app.request('POST', '/api/contacts', { token: app.adminToken, body: { email: ADDRESS, firstName: 'Petra', listIds: ['news'] } });
    const first = await send(ADDRESS, 'Receipt-4411');
    const second = await send(ADDRESS.toLowerCase(), 'Reminder-8812');
    await send('someone.else@example.org', 'Not-Hers-0001');
    await app.request('POST', '/api/suppressions', { token: app.adminToken, body: { email: ADDRESS, reason: 'asked by phone' } });
    await eventually(() => app.request('GET', `/api/messages/${second.body.messageLogId}`, { apiKey: sender.key }), (r) => r.body.status === 'sent');

    const res = await exportOf(ADDRESS);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.headers.get('content-disposition')).to.equal('attachment; filename="personal-data.json"');
    const data = res.body;
    expect(data.email).to.equal(ADDRESS);
    expect(data.contact).to.deep.include({ email: ADDRESS.toLowerCase(), firstName: 'Petra', listIds: ['news'] });
    expect(data.suppression).to.deep.include({ reason: 'manual' });
    expect(data.messages.map((m: { id: string }) => m.id)).to.deep.equal([first.body.messageLogId, second.body.messageLogId]);
    const text = JSON.stringify(data.messages);
    for (const marker of ['Receipt-4411 body', 'Reminder-8812', 'ProviderAccepted']) expect(text).to.include(marker);
    expect(text).not.to.include('Not-Hers-0001');

    const audit = await eventually(
      () => app.request('GET', '/api/audit?limit=20', { token: app.adminToken }),
      (r) => r.body.items?.some((i: { action: string }) => i.action === 'contact.exported'),
    );
    const entry = audit.body.items.find((i: { action: string }) => i.action === 'contact.exported');
    expect(entry.actor).to.include({ type: 'user' });
    expect(entry.target.type).to.equal('contact');
    expect(JSON.stringify(entry)).not.to.include('example.org');
  });

  it('a person with many messages comes whole and in order, streamed as it is read', async () => {
    const many = 'many.messages@example.org';
    const ids: string[] = [];
    for (let i = 0; i < 21; i++) ids.push((await send(many, `Many-${i}`)).body.messageLogId);
    // the export lists the messages the messages read model shows
    const res = await eventually(() => exportOf(many), (r) => r.body.messages?.length === ids.length);
    // no length known in advance: the body is written as the streams are read
    expect(res.headers.get('transfer-encoding')).to.equal('chunked');
    expect(res.body.messages.map((m: { id: string }) => m.id)).to.deep.equal(ids);
    res.body.messages.forEach((m: { history: { data: { subject?: string } }[] }, i: number) => expect(m.history[0].data.subject).to.equal(`Many-${i}`));
  });

  it('nothing kept is an empty export, not an error; an API key, another account and a malformed address are refused', async () => {
    const empty = await exportOf('never.seen@example.org');
    expect(empty.status).to.equal(200);
    expect(empty.body).to.deep.include({ contact: null, suppression: null, messages: [] });

    const other = await app.request('POST', '/api/auth/signup', { body: { accountName: 'Other', email: 'owner@export-other.example', password: 'other-password' } });
    expect((await exportOf(ADDRESS, other.body.token)).body).to.deep.include({ contact: null, suppression: null, messages: [] });
    const keyed = await app.request('POST', `/api/contacts/${encodeURIComponent(ADDRESS)}/export`, { apiKey: sender.key });
    expect(keyed.status).to.be.oneOf([401, 403]);
    expect((await exportOf('not-an-address')).status).to.equal(400);
  });

  it('a phone number SMS went to is a person too: exported and erased by its number', async () => {
    const { key } = await readyToSendSms(app);
    const NUMBER = '+14155552671';
    const sms = await app.request('POST', '/api/send/sms', { apiKey: key, body: { to: NUMBER, body: 'Sms-Marker-3131' } });
    expect(sms.status, JSON.stringify(sms.body)).to.equal(201);
    const detail = await eventually(() => app.request('GET', `/api/messages/${sms.body.messageLogId}`, { token: app.adminToken }), (r) => r.body.status === 'sent');
    expect(detail.body).to.include({ to: NUMBER, body: 'Sms-Marker-3131' });
    expect(detail.body).to.not.have.any.keys('html', 'text');

    // the SMS API's own spellings of a number find the same person
    for (const spelled of [NUMBER, '(415) 555-2671']) {
      const res = await exportOf(spelled);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.messages.map((m: { id: string }) => m.id)).to.deep.equal([sms.body.messageLogId]);
      expect(JSON.stringify(res.body.messages)).to.include('Sms-Marker-3131');
    }
    const erased = await app.request('DELETE', `/api/contacts/${encodeURIComponent(NUMBER)}?erase=true`, { token: app.adminToken });
    expect(erased.status, JSON.stringify(erased.body)).to.equal(200);
    const after = await exportOf(NUMBER);
    expect(after.body.messages).to.deep.equal([]);
    expect((await app.request('GET', `/api/messages/${sms.body.messageLogId}`, { token: app.adminToken })).body).to.include({ to: null, body: null });
  });

  it('after an erasure nothing ties the messages to the address: not the export, nor a contact added again with it', async () => {
    const before = await exportOf(ADDRESS);
    const ids = before.body.messages.map((m: { id: string }) => m.id);
    expect(ids).to.have.length(2);
    await app.request('DELETE', `/api/contacts/${encodeURIComponent(ADDRESS)}?erase=true`, { token: app.adminToken });
    const res = await eventually(() => exportOf(ADDRESS), (r) => r.body.messages?.length === 0);
    expect(res.status).to.equal(200);
    expect(res.body.contact).to.equal(null);
    expect(res.body.suppression).to.deep.include({ reason: 'manual' });

    await app.request('POST', '/api/contacts', { token: app.adminToken, body: { email: ADDRESS, firstName: 'Petra-Again' } });
    expect((await exportOf(ADDRESS)).body.messages).to.deep.equal([]);
    for (const id of ids) {
      const detail = await app.request('GET', `/api/messages/${id}`, { token: app.adminToken });
      expect(detail.status).to.equal(200);
      expect(detail.body).to.deep.include({ to: null, subject: null, contact: null });
    }
  });
});
