import { expect } from 'chai';
import { createSignInThrottle } from '../../src/commands/sign-in-throttle.js';
import { AppError, forbidden, unauthorized } from '../../src/domain/errors.js';
import type { RateLimiters } from '../../src/ports/rate-limiter.js';

/** Counters in a Map, windows never closing: enough to see what the throttle takes, gives back and clears. */
function countingLimiters(): RateLimiters & { counts: Map<string, number> } {
  const counts = new Map<string, number>();
  return {
    counts,
    limiter(limit) {
      const at = (key: string) => `${limit.name}|${key}`;
      return {
        async take(key) {
          const n = (counts.get(at(key)) ?? 0) + 1;
          counts.set(at(key), n);
          return n <= limit.points ? { allowed: true } : { allowed: false, retryAfterMs: 1500 };
        },
        async giveBack(key) {
          counts.set(at(key), (counts.get(at(key)) ?? 0) - 1);
        },
        async clear(key) {
          counts.delete(at(key));
        },
      };
    },
    async close() {},
  };
}

const limits = { perAccountAndIp: 2, perAccount: 10, perIp: 10, windowSeconds: 60 };
const wrong = () => Promise.reject(unauthorized('invalid email or password'));
const right = () => Promise.resolve('token');

describe('sign-in throttle', () => {
  it('counts a 401 as a failure in every bucket, and answers 429 with Retry-After past a limit', async () => {
    const limiters = countingLimiters();
    const throttle = createSignInThrottle({ limiters, limits });
    for (let i = 0; i < 2; i++) await throttle.attempt('A@x.example', '192.0.2.1', wrong).catch((e: AppError) => expect(e.status).to.equal(401));
    const refused = await throttle.attempt('a@x.example', '192.0.2.1', right).catch((e: AppError) => e);
    expect(refused).to.be.instanceOf(AppError);
    expect((refused as AppError).status).to.equal(429);
    expect((refused as AppError).headers).to.deep.equal({ 'Retry-After': '2' });
    // the refused attempt was not a failure for the buckets with room
    const byName = (prefix: string) => [...limiters.counts].filter(([k]) => k.startsWith(`${prefix}|`)).map(([, n]) => n);
    expect(byName('signin-ip')).to.deep.equal([2]);
    expect(byName('signin-account')).to.deep.equal([2]);
  });

  it("counts a signed-in user's wrong current password (a 403) as a failure too", async () => {
    const throttle = createSignInThrottle({ limiters: countingLimiters(), limits });
    const wrongCurrent = () => Promise.reject(forbidden('currentPassword: this is not your current password'));
    for (let i = 0; i < 2; i++) await throttle.attempt('a@x.example', '192.0.2.1', wrongCurrent).catch((e: AppError) => expect(e.status).to.equal(403));
    const refused = (await throttle.attempt('a@x.example', '192.0.2.1', right).catch((e: AppError) => e)) as AppError;
    expect(refused.status).to.equal(429);
  });

  it('an error other than a 401 (the store failing) counts as no failure', async () => {
    const limiters = countingLimiters();
    const throttle = createSignInThrottle({ limiters, limits });
    for (let i = 0; i < 5; i++) {
      const err = await throttle.attempt('a@x.example', '192.0.2.1', () => Promise.reject(new Error('database down'))).catch((e) => e);
      expect(err.message).to.equal('database down');
    }
    expect(await throttle.attempt('a@x.example', '192.0.2.1', right)).to.equal('token');
  });

  it('a success clears the account-and-address failures and counts nowhere; the email is never a key in clear', async () => {
    const limiters = countingLimiters();
    const throttle = createSignInThrottle({ limiters, limits });
    await throttle.attempt('a@x.example', '192.0.2.1', wrong).catch(() => {});
    expect(await throttle.attempt('a@x.example', '192.0.2.1', right)).to.equal('token');
    expect([...limiters.counts.keys()].some((k) => k.startsWith('signin-account-ip|'))).to.equal(false);
    expect([...limiters.counts.values()]).to.deep.equal([1, 1]);
    expect([...limiters.counts.keys()].join()).not.to.include('x.example');
  });
});
