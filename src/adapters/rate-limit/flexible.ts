import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { RateLimiterUnavailable, type RateLimiter } from '../../ports/rate-limiter.js';

/** The port over one rate-limiter-flexible limiter, whatever its store. */
export function fromFlexible(limiter: RateLimiterAbstract): RateLimiter {
  const unavailable = (err: unknown): never => {
    throw new RateLimiterUnavailable(err);
  };
  return {
    async take(key) {
      try {
        await limiter.consume(key);
        return { allowed: true };
      } catch (refusal) {
        // A refusal comes as the limiter's result; anything else is the store failing.
        if (!(refusal instanceof RateLimiterRes)) unavailable(refusal);
        return { allowed: false, retryAfterMs: Math.max((refusal as RateLimiterRes).msBeforeNext, 1) };
      }
    },
    async giveBack(key) {
      await limiter.reward(key, 1).catch(unavailable);
    },
    async clear(key) {
      await limiter.delete(key).catch(unavailable);
    },
  };
}
