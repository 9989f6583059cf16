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

  it('takes any positive provider rate as given, however slow or fast, and null; refuses zero, negatives and what is no number', () => {
    for (const providerRatePerSecond of [Number.MIN_VALUE, 1e-300, 0.005, 0.01, 2.5, 1_000_001, Number.MAX_VALUE, null]) {
      // from a rate of 7, so that each (null too) is a change
      const [event] = given(accountDecider, existing).when({ kind: 'changeSettings', patch: { providerRatePerSecond: 7 }, now });
      const events = given(accountDecider, [...existing, event]).when({ kind: 'changeSettings', patch: { providerRatePerSecond }, now });
      expect(events, String(providerRatePerSecond)).to.have.length(1);
      expect(events[0].data).to.have.nested.property('settings.providerRatePerSecond', providerRatePerSecond);
    }
    for (const providerRatePerSecond of [0, -0, -1, -1e-300, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => given(accountDecider, existing).when({ kind: 'changeSettings', patch: { providerRatePerSecond }, now }))
        .to.throw(AppError, 'providerRatePerSecond must be a positive number or null')
        .with.property('status', 400);
    }
  });
});
