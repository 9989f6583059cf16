import { expect } from 'chai';
import { isReachable, outcomeOfRefusal, stepRecord, type ContactOutcome } from '../../../src/domain/campaigns/fanout-step.js';

const now = new Date('2031-05-04T22:00:00.000Z');
const contacts = (...outcomes: (ContactOutcome | [ContactOutcome, 'unfilled'])[]) =>
  outcomes.map((o, i) => ({ id: `c${i + 1}`, outcome: Array.isArray(o) ? o[0] : o, unfilled: Array.isArray(o) }));

describe('a campaign fan-out step', () => {
  it('given every contact queued or skipped and none after the page, then done, the cursor at the last one, each counted', () => {
    expect(stepRecord({ fromCursor: 'c0', contacts: contacts('queued', 'skipped', ['queued', 'unfilled']), more: false, now })).to.deep.equal({
      progress: { cursor: 'c3', queued: 2, skipped: 1, unfilled: 1 },
      // named, so that the late walk tells them apart from the ones that joined behind the cursor
      skippedIds: ['c2'],
      done: true,
    });
  });

  it('given contacts after the page, then not done: another step follows', () => {
    expect(stepRecord({ fromCursor: null, contacts: contacts('queued'), more: true, now })).to.deep.equal({
      progress: { cursor: 'c1', queued: 1, skipped: 0, unfilled: 0 },
      skippedIds: [],
      done: false,
    });
  });

  it('given the daily cap at the third contact, then progress to the second, stopped until the next 00:00 UTC; who came after is left to the next step', () => {
    expect(stepRecord({ fromCursor: 'c0', contacts: contacts('queued', 'skipped', 'daily_send_cap', 'queued'), more: false, now })).to.deep.equal({
      progress: { cursor: 'c2', queued: 1, skipped: 1, unfilled: 0 },
      skippedIds: ['c2'],
      done: false,
      stoppedBy: { reason: 'daily_send_cap', resumeAt: '2031-05-05T00:00:00.000Z' },
    });
  });

  it('given the sender unverified at the first contact, then no progress from the cursor it began at, stopped for an admin', () => {
    expect(stepRecord({ fromCursor: 'c0', contacts: contacts('sender_not_verified', 'queued'), more: true, now })).to.deep.equal({
      progress: { cursor: 'c0', queued: 0, skipped: 0, unfilled: 0 },
      skippedIds: [],
      done: false,
      stoppedBy: { reason: 'sender_not_verified' },
    });
  });

  it('given the template refusing to render for the second contact, then progress to the first, stopped for an admin', () => {
    expect(stepRecord({ fromCursor: null, contacts: contacts('queued', 'template_failed', 'queued'), more: false, now })).to.deep.equal({
      progress: { cursor: 'c1', queued: 1, skipped: 0, unfilled: 0 },
      skippedIds: [],
      done: false,
      stoppedBy: { reason: 'template_failed' },
    });
  });

  it('given an empty page (an audience of zero), then done where it began', () => {
    expect(stepRecord({ fromCursor: null, contacts: [], more: false, now })).to.deep.equal({ progress: { cursor: null, queued: 0, skipped: 0, unfilled: 0 }, skippedIds: [], done: true });
  });

  it('a refused send: a suppressed address is skipped, the account cap and an unverified sender stop it, any other refusal is no outcome', () => {
    expect(outcomeOfRefusal('suppressed')).to.equal('skipped');
    // its contact erased or unsubscribed between the step's read and its message
    expect(outcomeOfRefusal('not_subscribed')).to.equal('skipped');
    expect(outcomeOfRefusal('account_daily_limit')).to.equal('daily_send_cap');
    expect(outcomeOfRefusal('unverified_sender')).to.equal('sender_not_verified');
    expect(outcomeOfRefusal('key_daily_limit')).to.equal(null);
    expect(outcomeOfRefusal('account_not_found')).to.equal(null);
  });

  it('a contact is sent to only while subscribed and with an address', () => {
    expect(isReachable({ status: 'subscribed', email: 'ada@example.org' })).to.equal(true);
    expect(isReachable({ status: 'subscribed', email: null })).to.equal(false);
    for (const status of ['unsubscribed', 'bounced', 'complained']) expect(isReachable({ status, email: 'ada@example.org' })).to.equal(false);
  });
});
