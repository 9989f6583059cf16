import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/app.js';
import { readyToSend } from '../support/email-setup.js';

const LONG_LOCAL = `${'x'.repeat(100)}@example.org`;
const LONG_LABEL = `ada@${'d'.repeat(64)}.org`;
const LONG_DOMAIN = `ada@${('d'.repeat(60) + '.').repeat(5)}org`;
const TOO_LONG = [LONG_LOCAL, LONG_LABEL, LONG_DOMAIN, `${'x'.repeat(200)}@example.org`];
const ATEXT = ['a=b@example.org', 'a/b@example.org', 'a~b@example.org', 'a#b@example.org', 'a&b@example.org', 'a{b}@example.org'];

/** One address rule everywhere: RFC 5322 atext is taken, RFC 5321's lengths are kept, each endpoint in its own words. */
describe('email addresses: every endpoint takes atext and refuses past RFC 5321 limits', function () {
  this.timeout(60_000);
  let app: TestApp;
  let sender: { key: string; from: string };
  let templateId: string;

  before(async () => {
    app = await startTestApp();
    sender = await readyToSend(app, { scopes: ['send', 'contacts:write'] });
    templateId = (await app.request('POST', '/api/templates', { token: app.adminToken, body: { name: 't', subject: 'Hi', html: '<p>x</p>', text: 'x' } })).body.id;
  });
  after(async () => {
    await app?.close();
  });

  const send = (fields: Record<string, unknown>) => app.request('POST', '/api/send/transactional', { apiKey: sender.key, body: { to: 'ada@example.org', fromEmail: sender.from, subject: 's', html: 'h', text: 't', ...fields } });

  it('sends: to and replyTo', async () => {
    for (const address of ATEXT) {
      const res = await send({ to: address, replyTo: address });
      expect(res.status, `${address}: ${res.text}`).to.equal(201);
    }
    for (const address of TOO_LONG) {
      const to = await send({ to: address });
      expect(to.status, address).to.equal(400);
      expect(to.body.message).to.equal('to: Invalid email address');
      expect((await send({ replyTo: address })).body.message).to.equal('replyTo: Invalid email address');
      // fromEmail keeps its own words for a display name, and the same rule
      expect((await send({ fromEmail: address })).body.message).to.equal('fromEmail: Invalid email address');
    }
  });

  it('a batch item', async () => {
    const res = await app.request('POST', '/api/send/batch', {
      apiKey: sender.key,
      body: { messages: [LONG_LOCAL, 'a=b@example.org'].map((to) => ({ to, fromEmail: sender.from, subject: 's', html: 'h', text: 't' })) },
    });
    expect(res.body.items.map((i: { status: number; message?: string }) => [i.status, i.message])).to.deep.equal([
      [400, 'to: Invalid email address'],
      [201, undefined],
    ]);
  });

  it('contacts, one and imported', async () => {
    expect((await app.request('POST', '/api/contacts', { token: app.adminToken, body: { email: 'a/b@example.org' } })).status).to.be.oneOf([200, 201]);
    const one = await app.request('POST', '/api/contacts', { token: app.adminToken, body: { email: LONG_LOCAL } });
    expect(one.status).to.equal(400);
    expect(one.body.message).to.equal('email: Invalid email address');
    const imported = await app.request('POST', '/api/contacts/import', { token: app.adminToken, body: { contacts: [{ email: LONG_LABEL }, { email: 'a~b@example.org' }] } });
    expect(imported.status, imported.text).to.equal(200);
    expect(imported.body).to.include({ total: 2, created: 1 });
    expect(imported.body.errors).to.deep.equal([{ index: 0, email: LONG_LABEL, message: 'email: Invalid email address' }]);
  });

  it('suppressions, one and imported', async () => {
    expect((await app.request('POST', '/api/suppressions', { token: app.adminToken, body: { email: 'a#b@example.org' } })).status).to.equal(201);
    const one = await app.request('POST', '/api/suppressions', { token: app.adminToken, body: { email: LONG_DOMAIN } });
    expect(one.status).to.equal(400);
    expect(one.body.message).to.equal('email: Invalid email address');
    const imported = await app.request('POST', '/api/suppressions/import', { token: app.adminToken, body: { entries: [{ email: LONG_LOCAL }, { email: 'a&b@example.org' }] } });
    expect(imported.status, imported.text).to.equal(200);
    expect(imported.body).to.include({ total: 2, suppressed: 1 });
    expect(imported.body.errors).to.have.length(1);
    expect(imported.body.errors[0]).to.include({ index: 0 });
  });

  it('single senders, campaigns and a template test send', async () => {
    expect((await app.request('POST', '/api/senders', { token: app.adminToken, body: { email: 'a{b}@example.net' } })).status).to.equal(201);
    const sender400 = await app.request('POST', '/api/senders', { token: app.adminToken, body: { email: LONG_LOCAL } });
    expect(sender400.status).to.equal(400);
    expect(sender400.body.message).to.equal('email: Invalid email address');
    const campaign = (replyTo: string) => app.request('POST', '/api/campaigns', { token: app.adminToken, body: { name: 'c', templateId, fromEmail: sender.from, replyTo, audience: {} } });
    expect((await campaign('a=b@example.org')).status).to.equal(201);
    expect((await campaign(LONG_LABEL)).body.message).to.equal('replyTo: Invalid email address');
    const test = (to: string) => app.request('POST', `/api/templates/${templateId}/test`, { token: app.adminToken, body: { to, fromEmail: sender.from } });
    expect((await test('a~b@example.org')).status).to.equal(201);
    expect((await test(LONG_LOCAL)).body.message).to.equal('to: Invalid email address');
  });
});
