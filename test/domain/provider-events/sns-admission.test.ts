import { expect } from 'chai';
import { admitSnsMessage, SNS_MAX_AGE_MS, SNS_MAX_AHEAD_MS } from '../../../src/domain/provider-events/sns-admission.js';

const now = new Date('2026-03-01T12:00:00.000Z');
const ours = 'arn:aws:sns:us-east-1:123456789012:ses-events';
const at = (offsetMs: number) => new Date(now.getTime() + offsetMs).toISOString();

describe('SNS message admission (topic allowlist, Timestamp window)', () => {
  it('accepts a message of an allowed topic sent now, or just within the hour', () => {
    expect(admitSnsMessage({ TopicArn: ours, Timestamp: at(0) }, { allowedTopics: [ours], now })).to.deep.equal({ ok: true });
    expect(admitSnsMessage({ TopicArn: ours, Timestamp: at(-SNS_MAX_AGE_MS) }, { allowedTopics: [ours], now }).ok).to.equal(true);
    expect(admitSnsMessage({ TopicArn: ours, Timestamp: at(SNS_MAX_AHEAD_MS) }, { allowedTopics: [ours], now }).ok).to.equal(true);
  });

  it('refuses a topic outside the allowlist, a missing topic, and a near miss', () => {
    for (const TopicArn of ['arn:aws:sns:us-east-1:999999999999:ses-events', 'arn:aws:sns:us-east-1:123456789012:ses-events-2', undefined, 42]) {
      const admission = admitSnsMessage({ TopicArn, Timestamp: at(0) }, { allowedTopics: [ours], now });
      expect(admission.ok, String(TopicArn)).to.equal(false);
      if (!admission.ok) expect(admission.reason).to.match(/^topic .* is not accepted$/);
    }
  });

  it('without an allowlist accepts any topic, but still judges the Timestamp', () => {
    expect(admitSnsMessage({ TopicArn: 'arn:aws:sns:eu-west-1:999999999999:theirs', Timestamp: at(0) }, { now }).ok).to.equal(true);
    expect(admitSnsMessage({ TopicArn: 'arn:aws:sns:eu-west-1:999999999999:theirs', Timestamp: at(-SNS_MAX_AGE_MS - 1) }, { now }).ok).to.equal(false);
  });

  it('refuses a Timestamp older than one hour, further than five minutes ahead, or not a date', () => {
    expect(admitSnsMessage({ TopicArn: ours, Timestamp: at(-SNS_MAX_AGE_MS - 1) }, { now })).to.deep.equal({ ok: false, reason: 'Timestamp is more than one hour old' });
    expect(admitSnsMessage({ TopicArn: ours, Timestamp: at(SNS_MAX_AHEAD_MS + 1) }, { now })).to.deep.equal({ ok: false, reason: 'Timestamp is in the future' });
    for (const Timestamp of [undefined, '', 't', 'March 1, 2026', 1772366400000]) {
      expect(admitSnsMessage({ TopicArn: ours, Timestamp }, { now }), String(Timestamp)).to.deep.equal({ ok: false, reason: 'Timestamp is not a date' });
    }
  });
});
