import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually, readyToSend } from '../support/email-setup.js';

describe('POST /api/send/transactional', function () {
  this.timeout(60_000);
  let app: TestApp;
  let key: string;
  let from: string;
  const send = (body: Record<string, unknown>, apiKey = key) => app.request('POST', '/api/send/transactional', { apiKey, body });
  const base = () => ({ to: 'reader@example.org', fromEmail: from, subject: 'Hello', html: '<p>Hello</p>', text: 'Hello' });
  const sandboxEmail = (messageId: string) =>
    eventually(
      () => app.infra.db('sandbox_emails').where({ message_id: messageId }).first(),
      (row) => Boolean(row),
    );

  before(async () => {
    app = await startTestApp();
    ({ key, from } = await readyToSend(app));
  });
  after(async () => app?.close());

  it("the reference's example bodies (what /docs' Try it out starts from) are sends the service takes", async () => {
    const doc = (await app.request('GET', '/openapi.json')).body;
    const example = (path: string) => doc.paths[path].post.requestBody.content['application/json'].example;
    const one = await app.request('POST', '/api/send/transactional', { apiKey: key, body: example('/api/send/transactional') });
    expect(one.status, JSON.stringify(one.body)).to.equal(201);
    const batch = await app.request('POST', '/api/send/batch', { apiKey: key, body: example('/api/send/batch') });
    expect(batch.status).to.equal(200);
    expect(batch.body.items.map((i: { status: number }) => i.status), JSON.stringify(batch.body)).to.deep.equal([201, 201]);
  });

  it('queues and answers 201 {queued, messageLogId}; the provider receives it and the message ends sent', async () => {
    const res = await send({ ...base(), fromName: 'Example App', replyTo: 'help@example.com' });
    expect(res.status).to.equal(201);
    expect(res.body).to.have.keys('queued', 'messageLogId');
    expect(res.body.queued).to.equal(true);
    const row = await sandboxEmail(res.body.messageLogId);
    expect(row).to.include({ from_header: `Example App <${from}>`, to_address: 'reader@example.org', reply_to: 'help@example.com', subject: 'Hello', text: 'Hello' });
    const history = await eventually(
      () => app.infra.eventStore.readStream(`message-${res.body.messageLogId}`),
      (events) => events.some((e) => e.type === 'ProviderAccepted'),
    );
    expect(history.map((e) => e.type)).to.deep.equal(['EmailQueued', 'ProviderAccepted']);
    expect(history[1].data.providerMessageId).to.equal(`sandbox-${res.body.messageLogId}`);
  });

  it('400 for an invalid payload, in the error shape', async () => {
    const noSubject = await send({ to: 'a@example.org', fromEmail: from, html: '<p>x</p>', text: 'x' });
    expect(noSubject.status).to.equal(400);
    expect(noSubject.body).to.deep.equal({
      message: 'subject: subject is required unless templateId is given',
      error: 'Bad Request',
      statusCode: 400,
      issues: [{ field: 'subject', message: 'subject is required unless templateId is given' }],
    });
    expect((await send({ ...base(), to: 'not-an-email' })).status).to.equal(400);
    expect((await send({ ...base(), unsubscribeUrl: 'javascript:alert(1)' })).status).to.equal(400);
    expect((await send({ ...base(), surprise: true })).status).to.equal(400);
    expect((await send({ ...base(), templateId: 'not a cuid' })).status).to.equal(400);
  });

  it('renders a template: html escaped, subject and text raw; request fields override the template', async () => {
    const tpl = await app.request('POST', '/api/templates', {
      token: app.adminToken,
      body: { name: 'welcome', subject: 'Hi {{name}}', html: '<p>Hi {{name}}</p>', text: 'Hi {{name}}' },
    });
    expect(tpl.status).to.equal(201);
    const res = await send({ to: 'reader@example.org', fromEmail: from, templateId: tpl.body.id, variables: { name: 'Tom & <Jerry>' } });
    expect(res.status).to.equal(201);
    const row = await sandboxEmail(res.body.messageLogId);
    expect(row.subject).to.equal('Hi Tom & <Jerry>');
    expect(row.text).to.equal('Hi Tom & <Jerry>');
    expect(row.html).to.include('<p>Hi Tom &amp; &lt;Jerry&gt;</p>');
    const override = await send({ to: 'reader@example.org', fromEmail: from, templateId: tpl.body.id, subject: 'Custom', variables: { name: 'A' } });
    expect((await sandboxEmail(override.body.messageLogId)).subject).to.equal('Custom');
    const missing = await send({ to: 'reader@example.org', fromEmail: from, templateId: 'clh3am1yr0000qzrmn831i7rn' });
    expect(missing.status).to.equal(400);
  });

  it('a send without templateId or variables goes out as written: braces are text, not placeholders', async () => {
    const res = await send({ ...base(), subject: 'Price {{x}}', html: '<p>Price {{#x}}</p>', text: 'Price {{x}} {{/y}}' });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const row = await sandboxEmail(res.body.messageLogId);
    expect(row).to.include({ subject: 'Price {{x}}', text: 'Price {{x}} {{/y}}' });
    expect(row.html).to.include('<p>Price {{#x}}</p>');
    // with variables, even none, they are placeholders again
    const filled = await send({ ...base(), subject: 'Price {{x}}', variables: { x: '3 EUR' } });
    expect((await sandboxEmail(filled.body.messageLogId)).subject).to.equal('Price 3 EUR');
    const empty = await send({ ...base(), subject: 'Price {{x}}', variables: {} });
    expect((await sandboxEmail(empty.body.messageLogId)).subject).to.equal('Price ');
  });

  it('400 <address> is suppressed, checked before the sender', async () => {
    const add = await app.request('POST', '/api/suppressions', { token: app.adminToken, body: { email: 'Gone@Example.org' } });
    expect(add.status).to.equal(201);
    const res = await send({ ...base(), to: 'gone@example.org', fromEmail: 'x@unverified.example' });
    expect(res.status).to.equal(400);
    expect(res.body.message).to.equal('gone@example.org is suppressed');
  });

  it('400 <address> is not verified for sending; a verified single sender is accepted', async () => {
    const res = await send({ ...base(), fromEmail: 'someone@unverified.example' });
    expect(res.status).to.equal(400);
    expect(res.body).to.deep.equal({ message: 'someone@unverified.example is not verified for sending', error: 'Bad Request', statusCode: 400 });
    const sender = await app.request('POST', '/api/senders', { token: app.adminToken, body: { email: 'solo@single.example' } });
    expect(sender.status).to.equal(201);
    expect((await send({ ...base(), fromEmail: 'solo@single.example' })).status).to.equal(201);
    expect((await send({ ...base(), fromEmail: 'other@single.example' })).status).to.equal(400);
  });

  it('answers concurrent sends (checked together) each by its own recipient and sender', async () => {
    const add = await app.request('POST', '/api/suppressions', { token: app.adminToken, body: { email: 'blocked@example.org' } });
    expect(add.status).to.equal(201);
    const answers = await Promise.all([
      send(base()),
      send({ ...base(), to: 'blocked@example.org' }),
      send({ ...base(), fromEmail: 'nobody@unverified.example' }),
      send({ ...base(), to: 'blocked@example.org', fromEmail: 'nobody@unverified.example' }),
      send({ ...base(), to: 'other@example.org' }),
    ]);
    expect(answers.map((r) => [r.status, r.body.message])).to.deep.equal([
      [201, undefined],
      [400, 'blocked@example.org is suppressed'],
      [400, 'nobody@unverified.example is not verified for sending'],
      [400, 'blocked@example.org is suppressed'],
      [201, undefined],
    ]);
    const rows = await Promise.all([answers[0], answers[4]].map((r) => sandboxEmail(r.body.messageLogId)));
    expect(rows.map((r) => r.to_address)).to.deep.equal(['reader@example.org', 'other@example.org']);
  });

  it('adds List-Unsubscribe headers only when unsubscribeUrl is passed', async () => {
    const without = await send(base());
    expect((await sandboxEmail(without.body.messageLogId)).headers).to.deep.equal([]);
    const withUrl = await send({ ...base(), unsubscribeUrl: 'https://example.com/prefs' });
    const headers = (await sandboxEmail(withUrl.body.messageLogId)).headers;
    expect(headers[0].name).to.equal('List-Unsubscribe');
    expect(headers[0].value).to.match(new RegExp(`^<${app.baseUrl}/u/[^>]+>$`));
    expect(headers[1]).to.deep.equal({ name: 'List-Unsubscribe-Post', value: 'List-Unsubscribe=One-Click' });
  });

  it('400 daily send limit reached for this API key', async () => {
    const limited = await app.request('POST', '/api/api-keys', { token: app.adminToken, body: { name: 'l', scopes: ['send'], dailyLimit: 2 } });
    expect((await send(base(), limited.body.key)).status).to.equal(201);
    expect((await send(base(), limited.body.key)).status).to.equal(201);
    const third = await send(base(), limited.body.key);
    expect(third.status).to.equal(400);
    expect(third.body.message).to.equal('daily send limit reached for this API key');
  });

  it('account cap: 60 concurrent sends against a cap of 20 accept exactly 20, the rest 429 Daily send limit reached', async () => {
    const signup = await app.request('POST', '/api/auth/signup', { body: { accountName: 'Capped', email: 'owner@capped.example', password: 'capped-password' } });
    const token = signup.body.token;
    expect((await app.request('PATCH', '/api/settings', { token, body: { dailySendCap: 20 } })).status).to.equal(200);
    const capped = await readyToSend(app, { token, domain: 'capped.example' });
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) => send({ ...base(), to: `r${i}@example.org`, fromEmail: capped.from }, capped.key)),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).to.have.length(20);
    expect(statuses.filter((s) => s === 429)).to.have.length(40);
    const tooMany = results.find((r) => r.status === 429)!;
    expect(tooMany.body).to.deep.equal({ message: 'Daily send limit reached', error: 'Too Many Requests', statusCode: 429 });
  });

  it('sends refused by a check take no slot of the cap, sent together with sends that take one', async () => {
    const signup = await app.request('POST', '/api/auth/signup', { body: { accountName: 'Mixed', email: 'owner@mixed.example', password: 'mixed-password' } });
    const token = signup.body.token;
    await app.request('PATCH', '/api/settings', { token, body: { dailySendCap: 2 } });
    const m = await readyToSend(app, { token, domain: 'mixed.example', key: { dailyLimit: 1 } });
    const plain = await readyToSend(app, { token, domain: 'mixed.example' });
    expect((await app.request('POST', '/api/suppressions', { token, body: { email: 'blocked@example.org' } })).status).to.equal(201);
    const results = await Promise.all([
      send({ ...base(), to: 'blocked@example.org', fromEmail: m.from }, m.key),
      send({ ...base(), fromEmail: 'nobody@unverified.example' }, m.key),
      send({ ...base(), to: 'blocked@example.org', fromEmail: m.from }, plain.key),
      send({ ...base(), fromEmail: 'nobody@unverified.example' }, plain.key),
      send({ ...base(), fromEmail: m.from }, m.key),
      send({ ...base(), fromEmail: m.from }, plain.key),
    ]);
    expect(results.slice(0, 4).map((r) => [r.status, r.body.message])).to.deep.equal([
      [400, 'blocked@example.org is suppressed'],
      [400, 'nobody@unverified.example is not verified for sending'],
      [400, 'blocked@example.org is suppressed'],
      [400, 'nobody@unverified.example is not verified for sending'],
    ]);
    // the refused sends left both caps whole: the key's one slot and the account's two are for these
    expect(results.slice(4).map((r) => r.status)).to.deep.equal([201, 201]);
    expect(await app.infra.counters.used(`key:${m.keyId}`)).to.equal(1);
    expect((await send({ ...base(), fromEmail: m.from }, m.key)).body.message).to.equal('daily send limit reached for this API key');
    expect((await send({ ...base(), fromEmail: m.from }, plain.key)).body.message).to.equal('Daily send limit reached');
  });

  it('the per-key cap counts only accepted sends and the account cap gives back the key slot it refused', async () => {
    const signup = await app.request('POST', '/api/auth/signup', { body: { accountName: 'Both', email: 'owner@both.example', password: 'both-password' } });
    const token = signup.body.token;
    await app.request('PATCH', '/api/settings', { token, body: { dailySendCap: 3 } });
    const a = await readyToSend(app, { token, domain: 'both.example', key: { dailyLimit: 2 } });
    const results = [];
    for (let i = 0; i < 4; i++) results.push((await send({ ...base(), fromEmail: a.from }, a.key)).status);
    expect(results).to.deep.equal([201, 201, 400, 400]);
  });

  describe('the key, checked in the same statement as the checks and the cap', () => {
    const accountUsed = async () => app.infra.counters.used('account:default');

    it('each refused key gets its exact 401/403 and takes no slot, also among good sends in one batch', async () => {
      const revoked = await app.createApiKey(['send'], { dailyLimit: 5 });
      expect((await app.request('DELETE', `/api/api-keys/${revoked.id}`, { token: app.adminToken })).status).to.equal(200);
      // far enough ahead to be in the future when the key is created, which refuses a past expiry
      const expiresAt = new Date(Date.now() + 1000).toISOString();
      const expired = await app.createApiKey(['send'], { expiresAt });
      await new Promise((r) => setTimeout(r, Date.parse(expiresAt) - Date.now() + 50));
      const fenced = await app.createApiKey(['send'], { ipAllowlist: ['203.0.113.9'] });
      const reader = await app.createApiKey(['read_events']);
      const before = await accountUsed();
      const answers = await Promise.all([
        send(base(), 'cl_not-a-real-key'),
        send(base(), revoked.key),
        send(base(), expired.key),
        send(base(), fenced.key),
        send(base(), reader.key),
        send(base()),
        app.request('POST', '/api/send/transactional', { apiKey: fenced.key, headers: { 'x-forwarded-for': '203.0.113.9' }, body: base() }),
      ]);
      expect(answers.map((r) => [r.status, r.body.message])).to.deep.equal([
        [401, 'invalid API key'],
        [401, 'invalid API key'],
        [401, 'API key expired'],
        [401, 'API key denied for this client IP'],
        [403, 'API key is missing required scope: send'],
        [201, undefined],
        [201, undefined],
      ]);
      expect((await accountUsed()) - before).to.equal(2);
      expect(await app.infra.counters.used(`key:${revoked.id}`)).to.equal(0);
    });

    it('a bad key is answered before any 400: invalid body, unknown template, template error', async () => {
      const missing = await app.request('POST', '/api/send/transactional', { body: base() });
      expect([missing.status, missing.body.message]).to.deep.equal([401, 'invalid API key']);
      const bad = 'cl_not-a-real-key';
      for (const body of [
        { to: 'not-an-email', fromEmail: from },
        { to: 'reader@example.org', fromEmail: from, templateId: 'clh3am8xm0000abcd1234efgh' },
        { ...base(), html: '<p>{{#open}}</p>', variables: {} },
        { ...base(), to: 'blocked@example.org' },
      ]) {
        const res = await send(body, bad);
        expect([res.status, res.body.message], JSON.stringify(body)).to.deep.equal([401, 'invalid API key']);
      }
      const reader = await app.createApiKey(['read_events']);
      const res = await send({ ...base(), html: '<p>{{#open}}</p>', variables: {} }, reader.key);
      expect([res.status, res.body.message]).to.deep.equal([403, 'API key is missing required scope: send']);
      // with a good key the same bodies are the 400s they are
      expect((await send({ ...base(), html: '<p>{{#open}}</p>', variables: {} })).body.message).to.equal('html: template error: Unclosed section "open" at 16');
    });

    it('records when the key was last used', async () => {
      const fresh = await app.createApiKey(['send']);
      expect((await send(base(), fresh.key)).status).to.equal(201);
      const listed = await eventually(
        () => app.request('GET', '/api/api-keys', { token: app.adminToken }),
        (r) => Boolean(r.body.items.find((k: any) => k.id === fresh.id)?.lastUsedAt),
      );
      expect(listed.status).to.equal(200);
    });
  });
});
