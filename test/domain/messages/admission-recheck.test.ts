import { expect } from 'chai';
import type { EmailQueued, MessageEvent, SmsQueued } from '../../../src/domain/messages/events.js';
import { FAILED_UNSENT, messageDecider, needsProviderCall } from '../../../src/domain/messages/message.js';
import { RECHECK_AFTER_MS, rechecksAdmission } from '../../../src/domain/messages/admission-recheck.js';
import { AppError } from '../../../src/domain/errors.js';
import { given } from '../../support/given.js';
import { emailQueued } from '../../support/messages-projection.js';

const queuedAt = '2026-01-01T00:00:00.000Z';
const sendAt = '2026-01-02T00:00:00.000Z';
const email: EmailQueued['data'] = emailQueued('m1', {
  accountId: 'a1',
  apiKeyId: 'k1',
  unsubscribeUrl: 'https://example.com/unsubscribe',
  to: 'r@example.org',
  subject: 'Hi',
  queuedAt,
  sendAt,
}).data;
const sms: SmsQueued['data'] = {
  messageId: 'm2',
  accountId: 'a1',
  apiKeyId: 'k1',
  to: '+14155550100',
  body: 'Your code is 1',
  segments: 1,
  encoding: 'gsm7',
  originationNumber: '+14155550199',
  provider: 'sandbox',
  queuedAt,
};
const scheduled: MessageEvent = { type: 'EmailQueued', data: email };
const smsQueued: MessageEvent = { type: 'SmsQueued', data: sms };
const accepted: MessageEvent = { type: 'ProviderAccepted', data: { providerMessageId: 'p1', provider: 'sandbox', acceptedAt: sendAt, attempt: 1 } };
const cancelled: MessageEvent = { type: 'MessageCancelled', data: { cancelledAt: queuedAt } };
const retrying: MessageEvent = { type: 'ProviderAttemptFailed', data: { attempt: 1, error: 'throttled', nextAttemptAt: sendAt, failedAt: sendAt } };
const recheck = (suppressedFor: 'unsubscribed' | 'bounced' | 'complained' | 'manual' | 'sms_optout' | null, senderVerified = true) =>
  ({ kind: 'recheckAdmission', suppressedFor, senderVerified, now: sendAt }) as const;

describe('a due message whose recipient was suppressed after it was accepted', () => {
  it('given a scheduled email, when its recipient has unsubscribed since, then it fails naming the suppression, and nothing is sent', () => {
    const events = given(messageDecider, [scheduled]).when(recheck('unsubscribed'));
    expect(events).to.deep.equal([
      {
        type: 'ProviderFailed',
        data: { attempt: 0, error: 'r@example.org is suppressed (unsubscribed): not sent, the recipient was suppressed after the message was accepted', failedAt: sendAt },
      },
    ]);
    const after = given(messageDecider, [scheduled, ...events]).state;
    expect(after.status).to.equal('failed');
    expect(needsProviderCall(after)).to.equal(false);
  });

  it('given a scheduled email, when its recipient is not suppressed, then nothing is recorded and it is sent', () => {
    const { state, when } = given(messageDecider, [scheduled]);
    expect(when(recheck(null))).to.deep.equal([]);
    expect(needsProviderCall(state)).to.equal(true);
  });

  it('given a bounce, a complaint or a manual suppression since, the error says which', () => {
    for (const reason of ['bounced', 'complained', 'manual'] as const) {
      const [failed] = given(messageDecider, [scheduled]).when(recheck(reason));
      expect((failed.data as { error: string }).error).to.match(new RegExp(`^r@example\\.org is suppressed \\(${reason}\\): not sent`));
    }
  });

  it('given an SMS being retried, when its number has opted out since, then it fails in the opt-out\'s words, keeping its attempt count', () => {
    const events = given(messageDecider, [smsQueued, retrying]).when(recheck('sms_optout'));
    expect(events).to.deep.equal([
      {
        type: 'ProviderFailed',
        data: { attempt: 1, error: '+14155550100 has opted out of SMS: not sent, the recipient was suppressed after the message was accepted', failedAt: sendAt },
      },
    ]);
  });

  it('given a message the provider has, or one cancelled or failed already, when suppressed, then nothing new', () => {
    const [failed] = given(messageDecider, [scheduled]).when(recheck('unsubscribed'));
    for (const history of [[scheduled, accepted], [scheduled, cancelled], [scheduled, failed]]) {
      expect(given(messageDecider, history).when(recheck('complained'))).to.deep.equal([]);
    }
  });

  it('given no message, when rechecked, then 404', () => {
    expect(() => given(messageDecider).when(recheck('unsubscribed'))).to.throw(AppError, 'message not found');
  });

  it('given a message failed so, when cancelled, then 409 saying it failed unsent (not that the provider has it)', () => {
    const [failed] = given(messageDecider, [scheduled]).when(recheck('unsubscribed'));
    const cancel = () => given(messageDecider, [scheduled, failed]).when({ kind: 'cancel', now: sendAt, sendClaimed: true });
    expect(cancel).to.throw(AppError, FAILED_UNSENT).with.property('status', 409);
  });
});

describe('a due email whose sender is no longer verified', () => {
  it('given a scheduled email, when its sender\'s domain was removed since, then it fails saying so, and nothing is sent', () => {
    const events = given(messageDecider, [scheduled]).when(recheck(null, false));
    expect(events).to.deep.equal([
      {
        type: 'ProviderFailed',
        data: { attempt: 0, error: `${email.fromEmail} is not verified for sending: not sent, the sender was no longer verified when the message was due`, failedAt: sendAt },
      },
    ]);
  });

  it('given a recipient suppressed since as well, then the suppression is named, as at admission', () => {
    const [failed] = given(messageDecider, [scheduled]).when(recheck('bounced', false));
    expect((failed.data as { error: string }).error).to.match(/^r@example\.org is suppressed \(bounced\)/);
  });

  it('given an SMS, its sender is not a question: it goes out', () => {
    expect(given(messageDecider, [smsQueued]).when(recheck(null, false))).to.deep.equal([]);
  });
});

describe('a due message whose content was erased before its time', () => {
  const erased = { kind: 'failUnsent', error: 'erased', now: sendAt } as const;

  it('given a scheduled email, when it cannot be sent, then it fails with no provider call counted, and a cancel says it failed unsent', () => {
    const events = given(messageDecider, [scheduled]).when(erased);
    expect(events).to.deep.equal([{ type: 'ProviderFailed', data: { attempt: 0, error: 'erased', failedAt: sendAt } }]);
    const cancel = () => given(messageDecider, [scheduled, ...events]).when({ kind: 'cancel', now: sendAt, sendClaimed: true });
    expect(cancel).to.throw(AppError, FAILED_UNSENT);
  });

  it('given a message being retried, then it keeps its attempt count; given one sent, cancelled or failed, then nothing new', () => {
    expect(given(messageDecider, [smsQueued, retrying]).when(erased)).to.deep.equal([{ type: 'ProviderFailed', data: { attempt: 1, error: 'erased', failedAt: sendAt } }]);
    const [failed] = given(messageDecider, [scheduled]).when(erased);
    for (const history of [[scheduled, accepted], [scheduled, cancelled], [scheduled, failed]]) {
      expect(given(messageDecider, history).when(erased)).to.deep.equal([]);
    }
  });
});

describe('which provider calls look at the suppression list again', () => {
  const at = (ms: number) => new Date(Date.parse(queuedAt) + ms).toISOString();

  it('a scheduled send, at its time (whatever the clocks say)', () => {
    expect(rechecksAdmission(email, sendAt)).to.equal(true);
    expect(rechecksAdmission(email, queuedAt)).to.equal(true);
  });

  it('not an immediate send called at once: its admission looked milliseconds before', () => {
    expect(rechecksAdmission({ ...email, sendAt: null }, at(30))).to.equal(false);
    expect(rechecksAdmission(sms, at(RECHECK_AFTER_MS - 1))).to.equal(false);
  });

  it('any message called RECHECK_AFTER_MS or more after it was accepted (a retry, a campaign\'s turn, an SMS)', () => {
    expect(rechecksAdmission({ ...email, sendAt: null }, at(RECHECK_AFTER_MS))).to.equal(true);
    expect(rechecksAdmission(sms, at(30 * 60_000))).to.equal(true);
  });
});
