import { expect } from 'chai';
import pg from 'pg';
import sinon from 'sinon';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually, readyToSend } from '../support/email-setup.js';

describe('POST /api/send/batch', function () {
  this.timeout(60_000);
  let app: TestApp;
  let key: string;
  let from: string;
  const batch = (body: unknown, apiKey = key) => app.request('POST', '/api/send/batch', { apiKey, body });
  const message = (over: Record<string, unknown> = {}) => ({ to: 'reader@example.org', fromEmail: from, subject: 'Hello', html: '<p>Hello</p>', text: 'Hello', ...over });

  before(async () => {
    app = await startTestApp();
    ({ key, from } = await readyToSend(app));
    expect((await app.request('POST', '/api/suppressions', { token: app.adminToken, body: { email: 'gone@example.org' } })).status).to.equal(201);
  });
  after(async () => app?.close());
  afterEach(() => sinon.restore());

  it('100 messages: one result each in request order, each checked on its own, admitted in one statement', async () => {
    const admissions = sinon.spy(pg.Client.prototype, 'query');
    const messages = Array.from({ length: 100 }, (_, i) => {
      if (i === 10) return message({ to: 'gone@example.org' });
      if (i === 20) return message({ fromEmail: 'x@unverified.example' });
      if (i === 30) return message({ subject: undefined });
      if (i === 40) return 'not a message';
      if (i === 50) return message({ tags: ['has space'] });
      return message({ to: `r${i}@example.org`, tags: ['batch'], metadata: { n: String(i) } });
    });
    const res = await batch({ messages });
    expect(res.status).to.equal(200);
    const items = res.body.items;
    expect(items).to.have.length(100);
    expect(items[10]).to.deep.equal({ status: 400, message: 'gone@example.org is suppressed', error: 'Bad Request' });
    expect(items[20]).to.deep.equal({ status: 400, message: 'x@unverified.example is not verified for sending', error: 'Bad Request' });
    // the same messages as a single send gives
    expect(items[30]).to.deep.include({ status: 400, message: 'subject: subject is required unless templateId is given', error: 'Bad Request' });
    expect(items[40]).to.deep.include({ status: 400, error: 'Bad Request' });
    expect(items[50]).to.deep.include({ status: 400, message: 'tags.0: a tag is 1 to 64 characters of A-Z a-z 0-9 _ : -' });
    const queued = items.filter((_: unknown, i: number) => ![10, 20, 30, 40, 50].includes(i));
    expect(queued).to.have.length(95);
    for (const item of queued) expect(item).to.have.keys('status', 'queued', 'messageLogId').and.include({ status: 201, queued: true });
    // the facts of every message in one statement, and the slots of the admitted ones in one more
    const named = (name: string) => admissions.getCalls().filter((c) => String((c.args[0] as { name?: string })?.name ?? '').includes(name));
    expect(named('send_facts')).to.have.length(1);
    expect(named('reserve_send_slots')).to.have.length(1);

    // request order: item i is the message sent to r<i>
    const ninth = await app.infra.eventStore.readStream(`message-${items[9].messageLogId}`);
    expect(ninth[0].data).to.include({ to: 'r9@example.org' });
    expect(ninth[0].data.tags).to.deep.equal(['batch']);
    expect(ninth[0].data.metadata).to.deep.equal({ n: '9' });
  });

  it('each message is capped on its own, in request order', async () => {
    const limited = await app.request('POST', '/api/api-keys', { token: app.adminToken, body: { name: 'l', scopes: ['send'], dailyLimit: 2 } });
    const res = await batch({ messages: [message(), message(), message(), message()] }, limited.body.key);
    expect(res.status).to.equal(200);
    expect(res.body.items.map((i: { status: number }) => i.status)).to.deep.equal([201, 201, 400, 400]);
    expect(res.body.items[2]).to.deep.equal({ status: 400, message: 'daily send limit reached for this API key', error: 'Bad Request' });
  });

  it('a NUL or a lone surrogate in one message refuses that message alone, naming its field; one elsewhere in the body refuses the batch', async () => {
    const body = { messages: [message(), message({ subject: 'a\u0000b' }), message({ metadata: { k: '\ud800' } }), message()] };
    const res = await app.request('POST', '/api/send/batch', { apiKey: key, body, headers: { 'idempotency-key': 'batch-with-nul' } });
    expect(res.status).to.equal(200);
    // kept as answered, and answered again for the same key (nothing of the bad items is stored)
    const replay = await app.request('POST', '/api/send/batch', { apiKey: key, body, headers: { 'idempotency-key': 'batch-with-nul' } });
    expect(replay.headers.get('idempotent-replayed')).to.equal('true');
    expect(replay.body).to.deep.equal(res.body);
    expect(res.body.items.map((i: { status: number }) => i.status)).to.deep.equal([201, 400, 400, 201]);
    expect(res.body.items[1]).to.deep.equal({ status: 400, message: 'message contains a NUL character (U+0000) in subject, which is not accepted', error: 'Bad Request' });
    expect(res.body.items[2].message).to.equal('message contains an unpaired UTF-16 surrogate (U+D800) in metadata.k, which is not accepted');
    const outside = await batch({ messages: [message()], 'x\u0000': 1 });
    expect(outside.status).to.equal(400);
    expect(outside.body.message).to.equal('request body contains a NUL character (U+0000) in a key, which is not accepted');
  });

  it('a message with sendAt is scheduled: its item keeps the HTTP status and carries its sendAt', async () => {
    const sendAt = new Date(Date.now() + 3_600_000).toISOString();
    const res = await batch({ messages: [message({ sendAt }), message()] });
    const [scheduled, now] = res.body.items;
    expect(scheduled).to.deep.equal({ status: 201, queued: true, messageLogId: scheduled.messageLogId, sendAt });
    expect(now).to.deep.equal({ status: 201, queued: true, messageLogId: now.messageLogId });
    const detail = await eventually(() => app.request('GET', `/api/messages/${scheduled.messageLogId}`, { token: app.adminToken }), (r) => r.status === 200);
    expect(detail.body).to.include({ status: 'scheduled', sendAt });
  });

  it('a message without templateId or variables goes out as written; one with variables is rendered', async () => {
    const res = await batch({ messages: [message({ subject: 'Price {{#x}}' }), message({ subject: 'Price {{x}}', variables: { x: '3' } }), message({ subject: 'Price {{#x}}', variables: {} })] });
    const [plain, filled, broken] = res.body.items;
    expect(broken).to.deep.include({ status: 400, message: 'subject: template error: Unclosed section "x" at 12' });
    const subjectOf = async (id: string) =>
      (await eventually(() => app.infra.db('sandbox_emails').where({ message_id: id }).first(), (row) => Boolean(row))).subject;
    expect(await subjectOf(plain.messageLogId)).to.equal('Price {{#x}}');
    expect(await subjectOf(filled.messageLogId)).to.equal('Price 3');
  });

  it('400 naming the limit for 101 messages, none, or not a list; nothing is queued', async () => {
    const before = await app.infra.counters.used('account:default');
    const expected = { message: 'messages: messages must be a list of 1 to 100 messages', error: 'Bad Request', statusCode: 400 };
    for (const body of [{ messages: Array.from({ length: 101 }, () => message()) }, { messages: [] }, { messages: message() }, {}]) {
      const res = await batch(body);
      expect(res.status).to.equal(400);
      expect(res.body).to.deep.include(expected);
    }
    expect((await batch({ messages: [message()], extra: 1 })).status).to.equal(400);
    expect((await batch([message()])).status).to.equal(400);
    expect(await app.infra.counters.used('account:default')).to.equal(before);
  });

  it('the key answers for the whole batch: 401 for a bad key, 403 without the send scope', async () => {
    expect((await batch({ messages: [message()] }, 'cl_not_a_key')).status).to.equal(401);
    const reader = await app.request('POST', '/api/api-keys', { token: app.adminToken, body: { name: 'r', scopes: ['read_events'] } });
    const res = await batch({ messages: [message()] }, reader.body.key);
    expect(res.status).to.equal(403);
  });

  it('is documented in /openapi.json with an example', async () => {
    const doc = await app.request('GET', '/openapi.json');
    const op = doc.body.paths['/api/send/batch'].post;
    expect(op['x-required-scope']).to.equal('send');
    const schema = op.requestBody.content['application/json'].schema;
    expect(schema.example.messages).to.have.length(2);
    expect(schema.properties.messages.maxItems).to.equal(100);
    expect(schema.properties.messages.items.properties).to.include.keys('to', 'fromEmail', 'tags', 'metadata');
  });
});
