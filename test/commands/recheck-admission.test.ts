import { expect } from 'chai';
import { createAdmissionRecheck } from '../../src/commands/recheck-admission.js';
import { execute } from '../../src/commands/execute.js';
import type { EmailQueued, SmsQueued } from '../../src/domain/messages/events.js';
import { messageDecider } from '../../src/domain/messages/message.js';
import { fold } from '../../src/domain/decider.js';
import { startTestApp, type TestApp } from '../support/app.js';

/**
 * The recheck against the suppression list and the verified senders as they are read: the recipient by
 * the keyed hash of an address or a number, the sender by its domain or address, only for a late call.
 */
describe('RecheckAdmission', function () {
  this.timeout(60_000);
  let app: TestApp;
  let accountId: string;
  let n = 0;
  const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
  const email = (to: string, extra: Partial<EmailQueued['data']> = {}): EmailQueued['data'] => ({
    messageId: `recheck-${++n}`, accountId, apiKeyId: null, campaignId: null, templateId: null, unsubscribeUrl: null, tracking: 'none', provider: 'sandbox',
    from: 'app@example.com', fromEmail: 'app@example.com', fromName: null, to, replyTo: null, subject: 's', html: null, text: 't', headers: [], queuedAt: ago(0), ...extra,
  });
  const sms = (to: string, queuedAt: string): SmsQueued['data'] => ({
    messageId: `recheck-${++n}`, accountId, apiKeyId: null, to, body: 'b', segments: 1, encoding: 'gsm7', originationNumber: '+14155550199', provider: 'sandbox', queuedAt,
  });

  /** queues the message on its stream and rechecks it as the send worker would, now */
  async function recheckOf(data: EmailQueued['data'] | SmsQueued['data']) {
    const streamId = `message-${data.messageId}`;
    const { eventStore, db, privacy } = app.infra;
    const command = 'body' in data ? { kind: 'queueSms' as const, data } : { kind: 'queueEmail' as const, data };
    await execute(messageDecider, command, { eventStore, streamId, history: [] });
    const history = await eventStore.readStream(streamId);
    const state = fold(messageDecider, history);
    const recheck = createAdmissionRecheck({ db, eventStore, personOf: privacy.personOf });
    const result = await recheck({ streamId, history, state, metadata: { actor: 'system:test' }, now: new Date().toISOString() });
    return { ...result, events: (await eventStore.readStream(streamId)).slice(1) };
  }
  const suppress = async (body: { email: string } | { phone: string }) =>
    expect((await app.request('POST', '/api/suppressions', { token: app.adminToken, body })).status).to.equal(201);

  before(async () => {
    app = await startTestApp();
    accountId = (await app.infra.db('accounts').first('id')).id;
    await suppress({ email: 'gone@example.org' });
    await suppress({ phone: '+14155550123' });
    const domain = await app.request('POST', '/api/domains', { token: app.adminToken, body: { domain: 'example.com' } });
    expect((await app.request('POST', `/api/domains/${domain.body.id}/verify`, { token: app.adminToken })).status).to.equal(200);
    const removed = await app.request('POST', '/api/domains', { token: app.adminToken, body: { domain: 'removed.example' } });
    expect((await app.request('DELETE', `/api/domains/${removed.body.id}`, { token: app.adminToken })).status).to.equal(204);
  });
  after(async () => app?.close());

  it('a scheduled email to an address suppressed since, written another way: failed, naming the suppression', async () => {
    const { withheld, state, events } = await recheckOf(email('Gone@Example.org', { sendAt: ago(0) }));
    expect(withheld).to.equal(true);
    expect(state.status).to.equal('failed');
    expect(events.map((e: any) => [e.type, e.data.attempt, e.data.error])).to.deep.equal([
      ['ProviderFailed', 0, 'Gone@Example.org is suppressed (manual): not sent, the recipient was suppressed after the message was accepted'],
    ]);
  });

  it('an SMS called a minute after it was accepted, to a number suppressed since: failed', async () => {
    const { withheld, events } = await recheckOf(sms('+14155550123', ago(60_000)));
    expect(withheld).to.equal(true);
    expect(events[0].data.error).to.match(/^\+14155550123 is suppressed \(manual\): not sent/);
  });

  it('a scheduled email from a sender whose domain was removed since, written another way: failed, saying so', async () => {
    const { withheld, state, events } = await recheckOf(email('here@example.org', { sendAt: ago(0), fromEmail: 'News@Removed.example' }));
    expect(withheld).to.equal(true);
    expect(state.status).to.equal('failed');
    expect(events.map((e: any) => [e.type, e.data.attempt, e.data.error])).to.deep.equal([
      ['ProviderFailed', 0, 'News@Removed.example is not verified for sending: not sent, the sender was no longer verified when the message was due'],
    ]);
  });

  it('an immediate send called at once is not looked up again (its admission just did): nothing recorded', async () => {
    const { withheld, state, events } = await recheckOf(email('gone@example.org'));
    expect(withheld).to.equal(false);
    expect(state.status).to.equal('queued');
    expect(events).to.deep.equal([]);
  });

  it('a scheduled email to an address not suppressed: nothing recorded, it is sent', async () => {
    const { withheld, state, events } = await recheckOf(email('here@example.org', { sendAt: ago(0) }));
    expect(withheld).to.equal(false);
    expect(state.status).to.equal('scheduled');
    expect(events).to.deep.equal([]);
  });
});
