import { expect } from 'chai';
import { hashApiKey } from '../../src/commands/api-keys.js';
import { IN_PROGRESS_MESSAGE, MISMATCH_MESSAGE } from '../../src/domain/idempotency/record.js';
import { callerScope, requestFingerprint } from '../../src/http/idempotency.js';
import { createIdempotentRequests } from '../../src/commands/idempotency.js';
import { createPgIdempotencyStore } from '../../src/adapters/db/idempotency-store.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { readyToSend } from '../support/email-setup.js';
import { readyToSendSms, setSms } from '../support/sms-setup.js';

const PATH = '/api/send/transactional';

describe('Idempotency-Key on the send endpoints', function () {
  this.timeout(60_000);
  let app: TestApp;
  let key: string;
  let from: string;
  let n = 0;
  const body = (extra: Record<string, unknown> = {}) => ({ to: 'reader@example.org', fromEmail: from, subject: 'Hello', html: '<p>Hello</p>', text: 'Hello', ...extra });
  const send = (idempotencyKey: string, payload: unknown, apiKey = key) =>
    app.request('POST', PATH, { apiKey, body: payload, headers: { 'idempotency-key': idempotencyKey } });
  const fresh = () => `key-${++n}-${Date.now()}`;
  /** the messages queued in all: EmailQueued and SmsQueued events in the store */
  const queuedCount = async () => Number((await app.infra.db('events').whereIn('type', ['EmailQueued', 'SmsQueued']).count({ n: '*' }).first())!.n);

  before(async () => {
    app = await startTestApp();
    ({ key, from } = await readyToSend(app));
  });
  after(async () => app?.close());

  it('a batch with the same key and body again: the first answer, Idempotent-Replayed: true, nothing queued', async () => {
    const k = fresh();
    const batch = { messages: [body(), body({ to: 'second@example.org' }), body({ fromEmail: 'someone@unverified.example.net' })] };
    const sendBatch = () => app.request('POST', '/api/send/batch', { apiKey: key, body: batch, headers: { 'idempotency-key': k } });
    const first = await sendBatch();
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    expect(first.body.items.map((i: { status: number }) => i.status)).to.deep.equal([201, 201, 400]);
    const before = await queuedCount();
    const again = await sendBatch();
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(again.text).to.equal(first.text);
    expect(await queuedCount()).to.equal(before);
  });

  it('the same key and body again: the first response (status and body, byte for byte), Idempotent-Replayed: true, nothing queued', async () => {
    const k = fresh();
    const first = await send(k, body());
    expect(first.status, JSON.stringify(first.body)).to.equal(201);
    expect(first.headers.get('idempotent-replayed')).to.equal(null);
    const before = await queuedCount();
    const again = await send(k, body());
    expect(again.status).to.equal(201);
    expect(again.text).to.equal(first.text);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(await queuedCount()).to.equal(before);
  });

  it('a scheduled send again: the first body byte for byte, its keys in the order they were answered', async () => {
    const k = fresh();
    const sendAt = new Date(Date.now() + 86_400_000).toISOString();
    const first = await send(k, body({ sendAt }));
    expect(first.status, first.text).to.equal(201);
    expect(Object.keys(first.body)).to.deep.equal(['queued', 'messageLogId', 'status', 'sendAt']);
    const again = await send(k, body({ sendAt }));
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(again.text).to.equal(first.text);
  });

  /** a sendAt a second ahead, and a wait until it has passed */
  const soon = () => {
    const sendAt = new Date(Date.now() + 1_000).toISOString();
    return { sendAt, passed: () => new Promise((r) => setTimeout(r, Date.parse(sendAt) - Date.now() + 100)) };
  };

  it('a scheduled send again after its sendAt has passed: the first 201, Idempotent-Replayed: true, nothing queued (not 400 sendAt)', async () => {
    const k = fresh();
    const { sendAt, passed } = soon();
    const first = await send(k, body({ sendAt }));
    expect(first.status, first.text).to.equal(201);
    await passed();
    const before = await queuedCount();
    const again = await send(k, body({ sendAt }));
    expect(again.status, again.text).to.equal(201);
    expect(again.text).to.equal(first.text);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(await queuedCount()).to.equal(before);
  });

  it('once a sendAt has passed: a new request is refused 400 naming it, the key it was remembered under with another body 409, a bad key 401', async () => {
    const k = fresh();
    const { sendAt, passed } = soon();
    expect((await send(k, body({ sendAt }))).status).to.equal(201);
    await passed();
    const late = await send(fresh(), body({ sendAt }));
    expect(late.status).to.equal(400);
    expect(late.body).to.deep.equal({
      issues: [{ field: 'sendAt', message: 'must be in the future, at most 30 days ahead' }],
      message: 'sendAt: must be in the future, at most 30 days ahead',
      error: 'Bad Request',
      statusCode: 400,
    });
    const other = await send(k, body({ sendAt, subject: 'Other' }));
    expect(other.status).to.equal(409);
    expect(other.body.message).to.equal(MISMATCH_MESSAGE);
    expect((await send(fresh(), body({ sendAt }), 'cl_not_a_key')).status).to.equal(401);
  });

  it('the same body with its keys in another order is the same request', async () => {
    const k = fresh();
    const first = await send(k, { text: 'Hi', html: '<p>Hi</p>', subject: 'Hi', fromEmail: from, to: 'reader@example.org' });
    const again = await send(k, { to: 'reader@example.org', fromEmail: from, subject: 'Hi', html: '<p>Hi</p>', text: 'Hi' });
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(again.body).to.deep.equal(first.body);
  });

  it('the same key with a different body: 409, nothing queued', async () => {
    const k = fresh();
    expect((await send(k, body())).status).to.equal(201);
    const before = await queuedCount();
    const res = await send(k, body({ subject: 'Other' }));
    expect(res.status).to.equal(409);
    expect(res.body).to.deep.equal({ message: MISMATCH_MESSAGE, error: 'Conflict', statusCode: 409 });
    expect(await queuedCount()).to.equal(before);
  });

  it('while the first request is in flight: 409 in progress', async () => {
    const k = fresh();
    const requests = createIdempotentRequests({ store: createPgIdempotencyStore(app.infra.db) });
    const claimed = await requests.claim(callerScope({ keyHash: hashApiKey(key) }), k, requestFingerprint('POST', PATH, body()));
    expect(claimed.kind).to.equal('claimed');
    const res = await send(k, body());
    expect(res.status).to.equal(409);
    expect(res.body).to.deep.equal({ message: IN_PROGRESS_MESSAGE, error: 'Conflict', statusCode: 409 });
  });

  it('a request refused with a 4xx is not remembered: the key is free for the corrected request', async () => {
    const k = fresh();
    const refused = await send(k, body({ fromEmail: 'someone@unverified.example.net' }));
    expect(refused.status).to.equal(400);
    const ok = await send(k, body());
    expect(ok.status, JSON.stringify(ok.body)).to.equal(201);
    expect(ok.headers.get('idempotent-replayed')).to.equal(null);
  });

  it('a body that fails validation answers 400 and leaves no record', async () => {
    const k = fresh();
    expect((await send(k, { to: 'not an address' })).status).to.equal(400);
    expect(await app.infra.db('idempotency_keys').where({ key: k }).first()).to.equal(undefined);
  });

  it('keys are the caller\'s own: another API key with the same key and body sends its own message', async () => {
    const k = fresh();
    const other = await app.createApiKey(['send']);
    const mine = await send(k, body());
    const theirs = await send(k, body(), other.key);
    expect(theirs.status).to.equal(201);
    expect(theirs.headers.get('idempotent-replayed')).to.equal(null);
    expect(theirs.body.messageLogId).to.not.equal(mine.body.messageLogId);
  });

  it('a revoked key is refused, not answered from the record', async () => {
    const k = fresh();
    const doomed = await app.createApiKey(['send']);
    expect((await send(k, body(), doomed.key)).status).to.equal(201);
    expect((await app.request('DELETE', `/api/api-keys/${doomed.id}`, { token: app.adminToken })).status).to.equal(200);
    expect((await send(k, body(), doomed.key)).status).to.equal(401);
  });

  it('a key longer than 255 characters, or empty: 400', async () => {
    const long = await send('x'.repeat(256), body());
    expect(long.status).to.equal(400);
    expect(long.body.message).to.equal('Idempotency-Key must be 1 to 255 characters');
    expect((await send('x'.repeat(255), body())).status).to.equal(201);
  });

  it('fifty concurrent requests with one key queue exactly one message', async () => {
    const k = fresh();
    const before = await queuedCount();
    const answers = await Promise.all(Array.from({ length: 50 }, () => send(k, body({ subject: 'Once' }))));
    const created = answers.filter((r) => r.status === 201);
    expect(created.length).to.be.greaterThan(0);
    expect(answers.filter((r) => r.status !== 201).every((r) => r.status === 409 && r.body.message === IN_PROGRESS_MESSAGE)).to.equal(true);
    expect(new Set(created.map((r) => r.body.messageLogId)).size).to.equal(1);
    expect(created.filter((r) => r.headers.get('idempotent-replayed') !== 'true')).to.have.length(1);
    expect(await queuedCount()).to.equal(before + 1);
  });

  it('a claim left in flight by a process that died after queueing is taken over once stale, and queues nothing twice', async () => {
    const k = fresh();
    const first = await send(k, body({ subject: 'Crash' }));
    const id = first.body.messageLogId;
    // as if the process had died between the append and the record's completion, three minutes ago
    await app.infra.db('idempotency_keys').where({ key: k }).update({
      status: 'in_flight',
      response_status: null,
      response_body: null,
      held_since: new Date(Date.now() - 3 * 60_000),
    });
    const before = await queuedCount();
    const retry = await send(k, body({ subject: 'Crash' }));
    expect(retry.status, JSON.stringify(retry.body)).to.equal(201);
    expect(retry.body).to.deep.equal({ queued: true, messageLogId: id });
    expect(await queuedCount()).to.equal(before);
    const again = await send(k, body({ subject: 'Crash' }));
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
  });

  /** as if the request's process had died between its append and the record's completion, a minute ago */
  const leftInFlight = (k: string) =>
    app.infra.db('idempotency_keys').where({ key: k }).update({ status: 'in_flight', response_status: null, response_body: null, held_since: new Date(Date.now() - 60_000) });

  it('the retry of a dead attempt answers what it queued, whatever happened to it since: its own bounce suppressed the address, it filled the key\'s day', async () => {
    const to = `bounce+retaken-${n}@simulator.amazonses.com`;
    const k = fresh();
    const first = await send(k, body({ to, subject: 'Bounces' }));
    expect(first.status, JSON.stringify(first.body)).to.equal(201);
    // the sandbox simulator bounces it, and the bounce suppresses the address
    for (let i = 0; (await app.request('GET', `/api/suppressions?search=${encodeURIComponent(to)}`, { token: app.adminToken })).body.items.length === 0; i++) {
      if (i > 100) throw new Error('not suppressed');
      await new Promise((r) => setTimeout(r, 100));
    }
    await leftInFlight(k);
    const retry = await send(k, body({ to, subject: 'Bounces' }));
    expect(retry.status, JSON.stringify(retry.body)).to.equal(201);
    expect(retry.body).to.deep.equal(first.body);

    const capped = (await app.request('POST', '/api/api-keys', { token: app.adminToken, body: { name: 'one a day', scopes: ['send'], dailyLimit: 1 } })).body.key;
    const once = fresh();
    const batch = { messages: [body({ subject: 'Once' })] };
    const sendBatch = () => app.request('POST', '/api/send/batch', { apiKey: capped, body: batch, headers: { 'idempotency-key': once } });
    const sent = await sendBatch();
    expect(sent.body.items[0].status, JSON.stringify(sent.body)).to.equal(201);
    await leftInFlight(once);
    const before = await queuedCount();
    const again = await sendBatch();
    expect(again.body, 'not: daily send limit reached for this API key').to.deep.equal(sent.body);
    expect(await queuedCount()).to.equal(before);
  });

  it('the retry of a dead attempt after its sendAt has passed answers what it queued, alone and in a batch', async () => {
    const k = fresh();
    const { sendAt, passed } = soon();
    const first = await send(k, body({ sendAt, subject: 'Scheduled, then a crash' }));
    expect(first.status, first.text).to.equal(201);
    const inBatch = fresh();
    const batch = { messages: [body({ sendAt, subject: 'Scheduled in a batch, then a crash' })] };
    const sendBatch = () => app.request('POST', '/api/send/batch', { apiKey: key, body: batch, headers: { 'idempotency-key': inBatch } });
    const sent = await sendBatch();
    expect(sent.body.items[0].status, sent.text).to.equal(201);
    await passed();
    await leftInFlight(k);
    await leftInFlight(inBatch);
    const before = await queuedCount();
    const retry = await send(k, body({ sendAt, subject: 'Scheduled, then a crash' }));
    expect(retry.status, retry.text).to.equal(201);
    expect(retry.body).to.deep.equal(first.body);
    expect((await sendBatch()).body).to.deep.equal(sent.body);
    expect(await queuedCount()).to.equal(before);
  });

  it('the same key on another send endpoint is a different request: 409', async () => {
    await setSms(app, {});
    const both = await app.createApiKey(['send', 'sms:send']);
    const k = fresh();
    expect((await send(k, body(), both.key)).status).to.equal(201);
    const sms = await app.request('POST', '/api/send/sms', { apiKey: both.key, body: { to: '+14155550100', body: 'hi' }, headers: { 'idempotency-key': k } });
    expect(sms.status).to.equal(409);
    expect(sms.body.message).to.equal(MISMATCH_MESSAGE);
  });

  it('/openapi.json documents the header, the 409s and Idempotent-Replayed on both send routes', async () => {
    const doc = (await app.request('GET', '/openapi.json')).body;
    for (const path of ['/api/send/transactional', '/api/send/sms']) {
      const op = doc.paths[path].post;
      expect(op.parameters.find((p: { name: string }) => p.name === 'Idempotency-Key'), path).to.deep.include({ in: 'header', required: false });
      expect(op.responses['409'].content['application/json'].examples.mismatch.value.message).to.equal(MISMATCH_MESSAGE);
      expect(op.responses['409'].content['application/json'].examples.inProgress.value.message).to.equal(IN_PROGRESS_MESSAGE);
      expect(op.responses['201'].headers).to.have.property('Idempotent-Replayed');
    }
    expect(doc.paths['/api/messages'].get.parameters.map((p: { name: string }) => p.name)).to.not.include('Idempotency-Key');
  });

  describe('POST /api/send/sms', () => {
    it('replays the first response and queues nothing', async () => {
      const { key: smsKey } = await readyToSendSms(app);
      const k = fresh();
      const sms = () => app.request('POST', '/api/send/sms', { apiKey: smsKey, body: { to: '+14155550100', body: 'Your code is 1' }, headers: { 'idempotency-key': k } });
      const first = await sms();
      expect(first.status, JSON.stringify(first.body)).to.equal(201);
      const before = await queuedCount();
      const again = await sms();
      expect(again.status).to.equal(201);
      // its keys are not in jsonb's order (shortest first), so this is the first text, not a copy through jsonb
      expect(Object.keys(first.body)).to.deep.equal(['queued', 'messageLogId', 'segments', 'encoding']);
      expect(again.text).to.equal(first.text);
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      expect(await queuedCount()).to.equal(before);
    });

    it('the retry of a dead attempt answers what it queued, though SMS was turned off since', async () => {
      const { key: smsKey } = await readyToSendSms(app);
      const k = fresh();
      const sms = () => app.request('POST', '/api/send/sms', { apiKey: smsKey, body: { to: '+14155550101', body: 'Your code is 2' }, headers: { 'idempotency-key': k } });
      const first = await sms();
      expect(first.status, JSON.stringify(first.body)).to.equal(201);
      await leftInFlight(k);
      await setSms(app, { enabled: false });
      const retry = await sms();
      expect(retry.status, JSON.stringify(retry.body)).to.equal(201);
      expect(retry.body).to.deep.equal(first.body);
      await setSms(app, {});
    });
  });
});
