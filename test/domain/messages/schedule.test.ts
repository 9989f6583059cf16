import { expect } from 'chai';
import type { EmailQueued, MessageEvent } from '../../../src/domain/messages/events.js';
import { mayCancel, messageDecider, needsProviderCall, statusAfter } from '../../../src/domain/messages/message.js';
import { MAX_SCHEDULE_AHEAD_MS, sendAtProblem } from '../../../src/domain/messages/schedule.js';
import { AppError } from '../../../src/domain/errors.js';
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
  sendAt: '2026-01-02T00:00:00.000Z',
};
const scheduled: MessageEvent = { type: 'EmailQueued', data: queued };
const immediate: MessageEvent = { type: 'EmailQueued', data: { ...queued, sendAt: null } };
const cancelled: MessageEvent = { type: 'MessageCancelled', data: { cancelledAt: '2026-01-01T01:00:00.000Z' } };
const accepted: MessageEvent = { type: 'ProviderAccepted', data: { providerMessageId: 'p1', provider: 'sandbox', acceptedAt: 't', attempt: 1 } };
const attemptFailed: MessageEvent = { type: 'ProviderAttemptFailed', data: { attempt: 1, error: 'throttled', nextAttemptAt: 't2', failedAt: 't' } };
const failed: MessageEvent = { type: 'ProviderFailed', data: { attempt: 1, error: 'rejected', failedAt: 't' } };
const cancel = { kind: 'cancel' as const, now: '2026-01-01T01:00:00.000Z' };

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return err as AppError;
  }
  throw new Error('expected a refusal');
};

describe('scheduled messages: decisions', () => {
  it('a send with sendAt is scheduled; one without is queued', () => {
    expect(given(messageDecider, [scheduled]).state.status).to.equal('scheduled');
    expect(given(messageDecider, [immediate]).state.status).to.equal('queued');
  });

  it('given a scheduled message, when cancelled, then MessageCancelled and the status is cancelled', () => {
    const events = given(messageDecider, [scheduled]).when(cancel);
    expect(events).to.deep.equal([cancelled]);
    expect(given(messageDecider, [scheduled, ...events]).state.status).to.equal('cancelled');
  });

  it('given a queued message the provider has not been asked about yet, when cancelled, then cancelled', () => {
    expect(given(messageDecider, [immediate]).when(cancel)).to.deep.equal([cancelled]);
  });

  it('given a cancelled message, when cancelled again, then nothing new (the same answer)', () => {
    expect(given(messageDecider, [scheduled, cancelled]).when(cancel)).to.deep.equal([]);
  });

  it('given a message the provider accepted, failed, or was tried for, when cancelled, then refused with 409', () => {
    for (const history of [[scheduled, accepted], [scheduled, failed], [scheduled, attemptFailed]]) {
      const err = refusal(() => given(messageDecider, history).when(cancel));
      expect(err).to.be.instanceOf(AppError);
      expect(err.status).to.equal(409);
      expect(err.message).to.equal('message has already been handed to the provider and cannot be cancelled');
    }
  });

  it('given a scheduled message whose send a worker has claimed, when cancelled, then refused with 409; once cancelled, still the same answer', () => {
    const err = refusal(() => given(messageDecider, [scheduled]).when({ ...cancel, sendClaimed: true }));
    expect(err.status).to.equal(409);
    expect(err.message).to.equal('message has already been handed to the provider and cannot be cancelled');
    expect(given(messageDecider, [scheduled, cancelled]).when({ ...cancel, sendClaimed: true })).to.deep.equal([]);
  });

  it('who may cancel: the key that sent it or a user of its account; no other key, no other account', () => {
    const state = given(messageDecider, [scheduled]).state;
    expect(mayCancel({ kind: 'apiKey', accountId: 'a1', apiKeyId: 'k1', scopes: ['send'], dailyLimit: null }, state)).to.equal(true);
    expect(mayCancel({ kind: 'user', accountId: 'a1', userId: 'u1' }, state)).to.equal(true);
    expect(mayCancel({ kind: 'apiKey', accountId: 'a1', apiKeyId: 'k2', scopes: ['send'], dailyLimit: null }, state)).to.equal(false);
    expect(mayCancel({ kind: 'user', accountId: 'a2', userId: 'u2' }, state)).to.equal(false);
    expect(mayCancel({ kind: 'user', accountId: 'a1', userId: 'u1' }, given(messageDecider).state)).to.equal(false);
  });

  it('given no message, when cancelled, then 404', () => {
    expect(refusal(() => given(messageDecider).when(cancel)).status).to.equal(404);
  });

  it('given a cancelled message, the send job calls nothing', () => {
    expect(needsProviderCall(given(messageDecider, [scheduled]).state)).to.equal(true);
    expect(needsProviderCall(given(messageDecider, [scheduled, cancelled]).state)).to.equal(false);
  });

  it('status: scheduled, then sent when the provider accepts it at its time, or queued while retrying', () => {
    expect(statusAfter(statusAfter(null, scheduled), accepted)).to.equal('sent');
    expect(statusAfter(statusAfter(null, scheduled), attemptFailed)).to.equal('queued');
    expect(statusAfter('sent', attemptFailed)).to.equal('sent');
    expect(statusAfter(statusAfter(null, scheduled), cancelled)).to.equal('cancelled');
  });
});

describe('sendAt limits', () => {
  const now = new Date('2026-01-01T00:00:00.000Z');
  const at = (ms: number) => new Date(now.getTime() + ms);

  it('accepts an instant in the future up to 30 days ahead', () => {
    expect(sendAtProblem(at(1), now)).to.equal(null);
    expect(sendAtProblem(at(MAX_SCHEDULE_AHEAD_MS), now)).to.equal(null);
  });

  it('refuses now, the past, and beyond 30 days, naming the limit', () => {
    expect(sendAtProblem(now, now)).to.equal('must be in the future, at most 30 days ahead');
    expect(sendAtProblem(at(-60_000), now)).to.equal('must be in the future, at most 30 days ahead');
    expect(sendAtProblem(at(MAX_SCHEDULE_AHEAD_MS + 1), now)).to.equal('must be at most 30 days ahead');
  });
});
