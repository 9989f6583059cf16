import { expect } from 'chai';
import type { TestApp } from '../support/app.js';
import { startAppWithFakeProviders, type AppWithFakeProviders } from '../support/app-with-fake-providers.js';
import { eventually, readyToSend, switchProvider } from '../support/email-setup.js';
import type { FakePostmark } from '../support/fake-postmark.js';
import type { FakeSes } from '../support/fake-ses.js';
import { emailQueued } from '../support/messages-projection.js';
import { createId } from '../../src/cuid.js';
import { execute } from '../../src/commands/execute.js';
import { messageStream } from '../../src/domain/messages/events.js';
import { messageDecider } from '../../src/domain/messages/message.js';

const INJECTED = 'Hi\r\nBcc: evil@x.com';
const EVERY_BREAK = 'a\u2028b\u2029c\u0085d\r\ne\rf\ng\u000bh\u000ci';

/** A line break in a single-line header value (subject, From's name) never reaches a provider: each run is one space. */
describe('POST /api/send/transactional: header values stay on one line at every provider', function () {
  this.timeout(120_000);
  let providers: AppWithFakeProviders | undefined;
  let app: TestApp;
  let ses: FakeSes;
  let pm: FakePostmark;
  let key: string;
  let from: string;
  const send = (body: Record<string, unknown>) =>
    app.request('POST', '/api/send/transactional', { apiKey: key, body: { to: 'reader@example.org', fromEmail: from, html: '<p>Hi</p>', text: 'Hi', ...body } });
  const message = (id: string) => app.request('GET', `/api/messages/${id}`, { token: app.adminToken }).then((r) => r.body);
  const sent = async (body: Record<string, unknown>) => {
    const res = await send(body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const id: string = res.body.messageLogId;
    expect((await eventually(() => message(id), (m) => m?.status === 'sent' || m?.status === 'failed', 30_000)).status).to.equal('sent');
    return id;
  };

  before(async () => {
    providers = await startAppWithFakeProviders();
    ({ app, ses, pm } = providers);
    ({ key, from } = await readyToSend(app));
  });
  after(async () => providers?.close());

  const cases = [
    { name: 'a subject as written', body: { subject: INJECTED }, subject: 'Hi Bcc: evil@x.com' },
    { name: 'a template subject filled with a line break', body: { subject: 'Hi {{firstName}}', variables: { firstName: 'Ada\r\nBcc: evil@x.com' } }, subject: 'Hi Ada Bcc: evil@x.com' },
    { name: 'every kind of line break', body: { subject: EVERY_BREAK }, subject: 'a b c d e f g h i' },
  ];

  it('SES (simple content): the Subject and the From name', async () => {
    await switchProvider(app, 'ses', { ses });
    for (const c of cases) {
      const id = await sent({ ...c.body, fromName: 'Acme\u2028Bcc: evil@x.com' });
      const got = ses.sent.find((s) => s.body.EmailTags.find((t: any) => t.Name === 'msg_id').Value === id)!;
      expect(got.body.Content.Simple.Subject.Data, c.name).to.equal(c.subject);
      expect(got.body.FromEmailAddress).to.equal(`"Acme Bcc: evil@x.com" <${from}>`);
      expect((await message(id)).subject).to.equal(c.subject);
    }
  });

  it('Postmark: the Subject and the From name', async () => {
    await switchProvider(app, 'postmark');
    for (const c of cases) {
      const id = await sent({ ...c.body, fromName: 'Acme\u0085Bcc: evil@x.com' });
      const got = pm.sent.find((s) => s.body.Metadata.msg_id === id)!;
      expect(got.body.Subject, c.name).to.equal(c.subject);
      expect(got.body.From).to.equal(`"Acme Bcc: evil@x.com" <${from}>`);
    }
  });

  it("a campaign: the template's subject filled with a contact's firstName", async () => {
    await switchProvider(app, 'sandbox');
    const template = await app.request('POST', '/api/templates', { token: app.adminToken, body: { name: 'hi', subject: 'Hi {{firstName}}', html: '<p>Hi</p>', text: 'Hi' } });
    expect(template.status).to.equal(201);
    const contact = await app.request('POST', '/api/contacts', { token: app.adminToken, body: { email: 'mallory@example.org', firstName: 'Mallory\r\nBcc: evil@x.com', listIds: ['crlf'] } });
    expect(contact.status, JSON.stringify(contact.body)).to.equal(201);
    const campaign = await app.request('POST', '/api/campaigns', { token: app.adminToken, body: { name: 'crlf', templateId: template.body.id, fromEmail: from, audience: { listId: 'crlf' } } });
    expect((await app.request('POST', `/api/campaigns/${campaign.body.id}/send`, { token: app.adminToken, body: {} })).status).to.equal(202);
    const row = await eventually(() => app.infra.db('sandbox_emails').where({ to_address: 'mallory@example.org' }).first(), (r) => Boolean(r), 30_000);
    expect(row.subject).to.equal('Hi Mallory Bcc: evil@x.com');
  });

  it('a message queued before this (its subject and headers as written) goes out on one line all the same', async () => {
    await switchProvider(app, 'sandbox');
    const { accountId } = (await app.request('GET', '/api/auth/session', { token: app.adminToken })).body;
    const id = createId();
    const { data } = emailQueued(id, {
      accountId,
      apiKeyId: null,
      queuedAt: new Date().toISOString(),
      from: `App\r\nBcc: evil@x.com <${from}>`,
      fromEmail: from,
      subject: INJECTED,
      replyTo: 'help@example.com\u2028Bcc: evil@x.com',
      headers: [{ name: 'List-Unsubscribe', value: '<https://example.com/u>\r\nBcc: evil@x.com' }],
    });
    await execute(messageDecider, { kind: 'queueEmail', data }, { eventStore: app.infra.eventStore, streamId: messageStream(id), metadata: { actor: 'system:test' } });
    const row = await eventually(() => app.infra.db('sandbox_emails').where({ message_id: id }).first(), (r) => Boolean(r), 30_000);
    expect(row).to.include({ subject: 'Hi Bcc: evil@x.com', from_header: `App Bcc: evil@x.com <${from}>`, reply_to: 'help@example.com Bcc: evil@x.com' });
    expect(row.headers).to.deep.equal([{ name: 'List-Unsubscribe', value: '<https://example.com/u> Bcc: evil@x.com' }]);
  });
});
