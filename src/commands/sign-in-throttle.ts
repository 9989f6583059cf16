import { createHash } from 'node:crypto';
import { AppError, throttled } from '../domain/errors.js';
import type { RateLimiters } from '../ports/rate-limiter.js';

export interface SignInLimits {
  /** failures for one account from one address; a success clears them (consecutive failures) */
  perAccountAndIp: number;
  /** failures for one account from any address (guessing spread over many addresses) */
  perAccount: number;
  /** failures from one address for any accounts (one client trying many accounts) */
  perIp: number;
  windowSeconds: number;
}

export interface SignInThrottle {
  /**
   * Runs `signIn` for `email` from `ip` unless a limit is reached (then 429 with Retry-After, whatever the
   * password). A wrong password (a 401 from it, or a 403 from a signed-in user's password change)
   * counts as a failure in every bucket; a success counts in none.
   */
  attempt<T>(email: string, ip: string | null, signIn: () => Promise<T>): Promise<T>;
}

const MESSAGE = 'too many failed sign-in attempts';

/**
 * Sign-in throttling in the shape OWASP describes: consecutive failures per account and address, and
 * larger buckets per account and per address. Each attempt is counted before the password is checked,
 * so attempts made at once cannot all slip in under the limit; one that turns out not to be a failure
 * is taken back.
 */
export function createSignInThrottle(deps: { limiters: RateLimiters; limits: SignInLimits }): SignInThrottle {
  const { limits } = deps;
  const limit = (name: string, points: number) => deps.limiters.limiter({ name, points, windowSeconds: limits.windowSeconds });
  const byIp = limit('signin-ip', limits.perIp);
  const byAccount = limit('signin-account', limits.perAccount);
  const byAccountAndIp = limit('signin-account-ip', limits.perAccountAndIp);
  // Narrowest first, taken one after the other: attempts made at once meet in the narrowest bucket, and
  // only those it admits go on to the wider ones, so they cannot crowd each other out across buckets
  // (taken all at once, 20 attempts with room for 3 could let through 2).
  const buckets = [byAccountAndIp, byAccount, byIp];

  return {
    async attempt(email, ip, signIn) {
      // The account by a hash of its login email: the counters never hold an address in clear.
      const account = createHash('sha256').update(email.trim().toLowerCase()).digest('base64url');
      const address = ip ?? 'unknown';
      const keys = [`${account}:${address}`, account, address];
      const giveBack = (count: number) => Promise.all(buckets.slice(0, count).map((bucket, i) => bucket.giveBack(keys[i])));

      for (const [i, bucket] of buckets.entries()) {
        const admission = await bucket.take(keys[i]);
        if (!admission.allowed) {
          // Refused without a password check: no failure for the buckets that had room.
          await giveBack(i);
          throw throttled(MESSAGE, admission.retryAfterMs);
        }
      }
      let result;
      try {
        result = await signIn();
      } catch (err) {
        if (!(err instanceof AppError && (err.status === 401 || err.status === 403))) await giveBack(buckets.length);
        throw err;
      }
      await Promise.all([byAccountAndIp.clear(keys[0]), byAccount.giveBack(account), byIp.giveBack(address)]);
      return result;
    },
  };
}
