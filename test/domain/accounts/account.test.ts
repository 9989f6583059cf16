import { expect } from 'chai';
import { accountDecider, DEFAULT_SETTINGS, DEFAULT_SMS_SETTINGS, MAX_DAILY_SEND_CAP, MIN_PROVIDER_RATE } from '../../../src/domain/accounts/account.js';
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

  it('refuses a provider rate slower than one call every 100 seconds (its window would not fit the limiter), and takes that one', () => {
    for (const providerRatePerSecond of [1e-300, 1e-17, 0.009, 0, -1, Number.NaN]) {
      expect(() => given(accountDecider, existing).when({ kind: 'changeSettings', patch: { providerRatePerSecond }, now }))
        .to.throw(AppError, 'providerRatePerSecond must be at least 0.01 (one call every 100 seconds) or null')
        .with.property('status', 400);
    }
    const [event] = given(accountDecider, existing).when({ kind: 'changeSettings', patch: { providerRatePerSecond: MIN_PROVIDER_RATE }, now });
    expect(event.data).to.have.nested.property('settings.providerRatePerSecond', 0.01);
  });
});
