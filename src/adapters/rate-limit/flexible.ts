import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RateLimiter } from '../../ports/rate-limiter.js';

/** The port over one rate-limiter-flexible limiter, whatever its store. */
export function fromFlexible(limiter: RateLimiterAbstract): RateLimiter {
  return {
    async take(key) {
      try {
        await limiter.consume(key);
        return { allowed: true };
      } catch (refusal) {
        // A refusal comes as the limiter's result; anything else is the store failing.
        if (!(refusal instanceof RateLimiterRes)) throw refusal;
        return { allowed: false, retryAfterMs: Math.max(refusal.msBeforeNext, 1) };
      }
    },
    async giveBack(key) {
      await limiter.reward(key, 1);
    },
    async clear(key) {
      await limiter.delete(key);
    },
  };
}
