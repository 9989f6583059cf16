import { expect } from 'chai';
import type { EmailQueued, MessageEvent } from '../../../src/domain/messages/events.js';
import { messageDecider, needsProviderCall } from '../../../src/domain/messages/message.js';
import { AppError } from '../../../src/domain/errors.js';
import type { ProviderEventOrigin } from '../../../src/domain/provider-events/event-admission.js';
import { given } from '../../support/given.js';

const queued: EmailQueued['data'] = {
  messageId: 'm1',
  accountId: 'a1',
  apiKeyId: 'k1',
  campaignId: null,
  templateId: null,
  unsubscribeUrl: null,
  tracking: 'service',
  provider: 'sandbox',
  from: 'App <app@example.com>',
  fromEmail: 'app@example.com',
  fromName: 'App',
  to: 'r@example.org',
  replyTo: null,
  subject: 'Hi',
  html: '<p>Hi</p>',
  text: 'Hi',
  headers: [],
  queuedAt: '2026-01-01T00:00:00.000Z',
};
const Q: MessageEvent = { type: 'EmailQueued', data: queued };
const accepted: MessageEvent = { type: 'ProviderAccepted', data: { providerMessageId: 'p1', provider: 'sandbox', acceptedAt: 't', attempt: 1 } };
const outcome = (type: 'Delivered' | 'Complained', id = 'e1'): MessageEvent =>
  ({ type, data: { providerEventId: id, occurredAt: 't', recipient: 'r@example.org' } }) as MessageEvent;
const bounce = (bounceType: 'hard' | 'soft', id = 'b1'): MessageEvent => ({
  type: 'Bounced',
  data: { providerEventId: id, occurredAt: 't', recipient: 'r@example.org', bounceType },
});

describe('message decisions', () => {
  it('queues once; the same message queued again is a no-op', () => {
    expect(given(messageDecider).when({ kind: 'queueEmail', data: queued })).to.deep.equal([Q]);
    expect(given(messageDecider, [Q]).when({ kind: 'queueEmail', data: queued })).to.deep.equal([]);
  });

  it('records the provider id once, and never after a final failure', () => {
    const cmd = { kind: 'providerAccepted' as const, providerMessageId: 'p1', provider: 'sandbox', attempt: 1, now: 't' };
    expect(given(messageDecider, [Q]).when(cmd)).to.have.length(1);
    expect(given(messageDecider, [Q, accepted]).when(cmd)).to.deep.equal([]);
    const failed: MessageEvent = { type: 'ProviderFailed', data: { attempt: 1, error: 'rejected', failedAt: 't' } };
    expect(given(messageDecider, [Q, failed]).when(cmd)).to.deep.equal([]);
  });

  it('a retryable error records an attempt with its retry time; a final one fails the message', () => {
    const retry = given(messageDecider, [Q]).when({ kind: 'providerError', attempt: 1, error: 'throttled', retryAt: 'later', now: 't' });
    expect(retry[0].type).to.equal('ProviderAttemptFailed');
    const final = given(messageDecider, [Q]).when({ kind: 'providerError', attempt: 1, error: 'MessageRejected', retryAt: null, now: 't' });
    expect(final[0].type).to.equal('ProviderFailed');
    expect(given(messageDecider, [Q, ...final]).state.status).to.equal('failed');
    expect(needsProviderCall(given(messageDecider, [Q, ...final]).state)).to.equal(false);
    expect(needsProviderCall(given(messageDecider, [Q, ...retry]).state)).to.equal(true);
  });

  it('moves status forward only: sent → delivered → complained; soft bounces do not change it', () => {
    expect(given(messageDecider, [Q]).state.status).to.equal('queued');
    expect(given(messageDecider, [Q, accepted]).state.status).to.equal('sent');
    expect(given(messageDecider, [Q, accepted, outcome('Delivered')]).state.status).to.equal('delivered');
    expect(given(messageDecider, [Q, accepted, outcome('Delivered'), outcome('Complained', 'e2')]).state.status).to.equal('complained');
    expect(given(messageDecider, [Q, accepted, bounce('soft')]).state.status).to.equal('sent');
    expect(given(messageDecider, [Q, accepted, bounce('hard')]).state.status).to.equal('bounced');
    // a late delivery report does not undo a bounce
    expect(given(messageDecider, [Q, accepted, bounce('hard'), outcome('Delivered', 'e3')]).state.status).to.equal('bounced');
    // an outcome before the provider id (events can race the send result) still counts
    expect(given(messageDecider, [Q, outcome('Delivered'), accepted]).state.status).to.equal('delivered');
  });

  it('records a provider event once', () => {
    const cmd = { kind: 'recordOutcome' as const, event: outcome('Delivered') as any };
    expect(given(messageDecider, [Q, accepted]).when(cmd)).to.have.length(1);
    expect(given(messageDecider, [Q, accepted, outcome('Delivered')]).when(cmd)).to.deep.equal([]);
  });

  it('a provider event recorded by an earlier version under another id (`formerId`) is not recorded again', () => {
    const former = outcome('Delivered', 'pm:click:p1:2026-01-01T00:00:00Z');
    const cmd = { kind: 'recordOutcome' as const, event: outcome('Delivered', 'pm:click:p1:digest') as any, formerId: 'pm:click:p1:2026-01-01T00:00:00Z' };
    expect(given(messageDecider, [Q, accepted, former]).when(cmd)).to.deep.equal([]);
    expect(given(messageDecider, [Q, accepted]).when(cmd)).to.deep.equal([outcome('Delivered', 'pm:click:p1:digest')]);
  });

  it('a provider event naming the message by our id and its own records the acceptance first, once', () => {
    const acceptedAs = { providerMessageId: 'p9', at: 't0' };
    const provenAccepted = { type: 'ProviderAccepted', data: { providerMessageId: 'p9', provider: 'sandbox', acceptedAt: 't0', attempt: 1 } };
    expect(given(messageDecider, [Q]).when({ kind: 'recordOutcome', event: outcome('Delivered') as any, acceptedAs })).to.deep.equal([provenAccepted, outcome('Delivered')]);
    // an SES Send event: the acceptance alone, counted as the attempt in flight
    const retried: MessageEvent = { type: 'ProviderAttemptFailed', data: { attempt: 1, error: 'throttled', nextAttemptAt: 't', failedAt: 't' } };
    expect(given(messageDecider, [Q, retried]).when({ kind: 'recordOutcome', acceptedAs })).to.deep.equal([
      { ...provenAccepted, data: { ...provenAccepted.data, attempt: 2 } },
    ]);
    // already known, or the message failed for good: the outcome only
    expect(given(messageDecider, [Q, accepted]).when({ kind: 'recordOutcome', event: outcome('Delivered') as any, acceptedAs })).to.deep.equal([outcome('Delivered')]);
    const failed: MessageEvent = { type: 'ProviderFailed', data: { attempt: 1, error: 'rejected', failedAt: 't' } };
    expect(given(messageDecider, [Q, failed]).when({ kind: 'recordOutcome', acceptedAs })).to.deep.equal([]);
  });

  it('records an outside event only when it agrees with the message: its provider, its provider id, its recipient', () => {
    const sesQ: MessageEvent = { type: 'EmailQueued', data: { ...queued, provider: 'ses' } };
    const sesAccepted: MessageEvent = { type: 'ProviderAccepted', data: { providerMessageId: 'ses-1', provider: 'ses', acceptedAt: 't', attempt: 1 } };
    const origin: ProviderEventOrigin = { provider: 'ses', providerMessageId: 'ses-1', recipient: 'r@example.org', receivedAt: '2026-11-27T12:00:00.000Z' };
    const cmd = (over: Partial<ProviderEventOrigin>) => ({ kind: 'recordOutcome' as const, event: outcome('Delivered') as any, origin: { ...origin, ...over } });
    expect(given(messageDecider, [sesQ, sesAccepted]).when(cmd({}))).to.deep.equal([outcome('Delivered')]);
    expect(given(messageDecider, [sesQ, sesAccepted]).when(cmd({ recipient: 'other@example.org' }))).to.deep.equal([]);
    expect(given(messageDecider, [sesQ, sesAccepted]).when(cmd({ providerMessageId: 'ses-2' }))).to.deep.equal([]);
    expect(given(messageDecider, [sesQ, sesAccepted]).when(cmd({ provider: 'postmark' }))).to.deep.equal([]);
    // the send worker recorded another provider id since the caller read the stream: the acceptance proof is refused with the rest
    const acceptedAs = { providerMessageId: 'ses-2', at: 't0' };
    expect(given(messageDecider, [sesQ, sesAccepted]).when({ ...cmd({ providerMessageId: 'ses-2' }), acceptedAs })).to.deep.equal([]);
    expect(given(messageDecider, [sesQ]).when({ ...cmd({ providerMessageId: 'ses-2' }), acceptedAs })).to.have.length(2);
  });

  it('a message whose address reads as null (its person erased, its content expired) takes the events of its recipient by keyed hash', () => {
    // as the sealing store reads it once the key is gone: `to` null, the person's keyed hash in clear
    const forgotten = { type: 'EmailQueued', data: { ...queued, provider: 'ses', to: null }, metadata: { person: 'hash-of-r' } };
    const sesAccepted: MessageEvent = { type: 'ProviderAccepted', data: { providerMessageId: 'ses-1', provider: 'ses', acceptedAt: 't', attempt: 1 } };
    const origin: ProviderEventOrigin = { provider: 'ses', providerMessageId: 'ses-1', recipient: 'r@example.org', person: 'hash-of-r', receivedAt: '2026-11-27T12:00:00.000Z' };
    const hard = { kind: 'recordOutcome' as const, event: bounce('hard') as any, origin };
    const then = given(messageDecider, [forgotten, sesAccepted]);
    expect(then.state.person).to.equal('hash-of-r');
    expect(then.when(hard)).to.deep.equal([bounce('hard')]);
    expect(then.when({ ...hard, origin: { ...origin, recipient: 'other@example.org', person: 'hash-of-other' } })).to.deep.equal([]);
    expect(given(messageDecider, [forgotten, sesAccepted, bounce('hard')]).when(hard)).to.deep.equal([]);
  });

  it('refuses outcomes for an unknown message', () => {
    expect(() => given(messageDecider).when({ kind: 'recordOutcome', event: outcome('Delivered') as any }))
      .to.throw(AppError)
      .with.property('status', 404);
  });
});
