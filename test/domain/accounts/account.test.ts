import { expect } from 'chai';
import { accountDecider, DEFAULT_SETTINGS, DEFAULT_SMS_SETTINGS, MAX_DAILY_SEND_CAP } from '../../../src/domain/accounts/account.js';
import { AppError } from '../../../src/domain/errors.js';
import { given } from '../../support/given.js';

const now = '2026-01-01T00:00:00.000Z';
const existing = [{ type: 'AccountCreated', data: { accountId: 'a1', name: 'A', createdAt: now, settings: DEFAULT_SETTINGS, sms: DEFAULT_SMS_SETTINGS } }];

describe('account decisions', () => {
  it('refuses a daily send cap the read models cannot hold, and takes the largest they can', () => {
    for (const dailySendCap of [MAX_DAILY_SEND_CAP + 1, Number.MAX_SAFE_INTEGER]) {
      expect(() => given(accountDecider, existing).when({ kind: 'changeSettings', patch: { dailySendCap }, now }))
        .to.throw(AppError, /dailySendCap must be at most 2147483647/)
        .with.property('status', 400);
    }
    const events = given(accountDecider, existing).when({ kind: 'changeSettings', patch: { dailySendCap: MAX_DAILY_SEND_CAP }, now });
    expect(events).to.have.length(1);
    expect(events[0].data).to.have.nested.property('settings.dailySendCap', MAX_DAILY_SEND_CAP);
  });
});
