import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually, readyToSend } from '../support/email-setup.js';
import { readyToSendSms } from '../support/sms-setup.js';
import { messageStream } from '../../src/domain/messages/events.js';
import { signOpenPixel } from '../../src/domain/email/link-signature.js';

/**
 * What an auditor replaying a message reads besides what happened: who asked (the actor), from which
 * address, and the request that caused it (its X-Request-Id, which the caller also got back), on the
 * sends and the cancel as on every admin action.
 */
describe('events record the request that caused them', function () {
  this.timeout(60_000);
  let app: TestApp;
  let key: string;
  let keyId: string;
  let from: string;

  before(async () => {
    app = await startTestApp();
    ({ key, keyId, from } = await readyToSend(app));
  });
  after(async () => app?.close());

  const firstEvent = async (messageId: string, type: string) => {
    const events = await app.infra.eventStore.readStream(messageStream(messageId));
    const event = events.find((e) => e.type === type);
    expect(event, `${type} of ${messageId}`).to.not.equal(undefined);
    return event!;
  };
  const causedBy = (requestId: string, actor: string) => ({ actor, correlationId: requestId, causationId: requestId, clientIp: '127.0.0.1' });
  const email = () => ({ to: 'ada@example.org', fromEmail: from, subject: 'Hi', html: '<p>Hi</p>', text: 'Hi' });

  it('a transactional send, a batch and a cancel', async () => {
    const sent = await app.request('POST', '/api/send/transactional', { apiKey: key, body: email(), headers: { 'x-request-id': 'req-send-1' } });
    expect(sent.status).to.equal(201);
    expect(sent.headers.get('x-request-id')).to.equal('req-send-1');
    expect((await firstEvent(sent.body.messageLogId, 'EmailQueued')).metadata).to.deep.include(causedBy('req-send-1', `apikey:${keyId}`));
    // what followed, the provider's acceptance by the send worker, keeps the request's correlation
    const accepted = await eventually(() => app.infra.eventStore.readStream(messageStream(sent.body.messageLogId)), (events) => events.some((e) => e.type === 'ProviderAccepted'));
    expect(accepted.find((e) => e.type === 'ProviderAccepted')!.metadata).to.deep.include({ actor: 'system:send-worker', correlationId: 'req-send-1' });
    // and so does the recipient's open, days later
    const browser = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15';
    const linkSecret = (await app.infra.db('service_secrets').where({ name: 'links' }).first('value')).value as string;
    const pixel = `${app.baseUrl}/o/${sent.body.messageLogId}?s=${signOpenPixel(linkSecret, sent.body.messageLogId)}`;
    expect((await fetch(pixel, { headers: { 'user-agent': browser } })).status).to.equal(200);
    const opened = await eventually(() => app.infra.eventStore.readStream(messageStream(sent.body.messageLogId)), (events) => events.some((e) => e.type === 'Opened'));
    expect(opened.find((e) => e.type === 'Opened')!.metadata).to.deep.include({ actor: 'recipient', correlationId: 'req-send-1' });

    const sendAt = new Date(Date.now() + 3_600_000).toISOString();
    const batch = await app.request('POST', '/api/send/batch', { apiKey: key, body: { messages: [email(), { ...email(), sendAt }] }, headers: { 'x-request-id': 'req-batch-1' } });
    expect(batch.status).to.equal(200);
    for (const item of batch.body.items) {
      expect((await firstEvent(item.messageLogId, 'EmailQueued')).metadata).to.deep.include(causedBy('req-batch-1', `apikey:${keyId}`));
    }

    const scheduled = batch.body.items[1].messageLogId;
    const cancel = await app.request('POST', `/api/messages/${scheduled}/cancel`, { token: app.adminToken, headers: { 'x-request-id': 'req-cancel-1' } });
    expect(cancel.status).to.equal(200);
    const cancelled = await firstEvent(scheduled, 'MessageCancelled');
    expect(cancelled.metadata).to.deep.include({ correlationId: 'req-cancel-1', causationId: 'req-cancel-1', clientIp: '127.0.0.1' });
    expect(cancelled.metadata!.actor).to.match(/^user:/);
  });

  it('an SMS send', async () => {
    const { key: smsKey, keyId: smsKeyId } = await readyToSendSms(app);
    const sent = await app.request('POST', '/api/send/sms', { apiKey: smsKey, body: { to: '+14155550100', body: 'Your code is 1' }, headers: { 'x-request-id': 'req-sms-1' } });
    expect(sent.status).to.equal(201);
    expect((await firstEvent(sent.body.messageLogId, 'SmsQueued')).metadata).to.deep.include(causedBy('req-sms-1', `apikey:${smsKeyId}`));
  });

  it('a request without an id of its own gets one, answered and recorded', async () => {
    const sent = await app.request('POST', '/api/send/transactional', { apiKey: key, body: email(), headers: { 'x-request-id': 'not a token!' } });
    const requestId = sent.headers.get('x-request-id')!;
    expect(requestId).to.match(/^[0-9a-f-]{36}$/);
    expect((await firstEvent(sent.body.messageLogId, 'EmailQueued')).metadata).to.deep.include(causedBy(requestId, `apikey:${keyId}`));
  });
});
