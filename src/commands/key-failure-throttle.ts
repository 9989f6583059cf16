import { throttled, type AppError } from '../domain/errors.js';
import type { RateLimiters } from '../ports/rate-limiter.js';

export interface KeyFailureThrottle {
  /** Counts a refused API key from `ip`: the refusal itself while within the limit, else a 429 with Retry-After. */
  refused(ip: string | null, refusal: AppError): Promise<AppError>;
}

export const KEY_FAILURES_MESSAGE = 'too many failed API key attempts from this address';

/**
 * API-key failures (unknown, revoked, expired, IP not allowed) per client address. Only a refusal is
 * counted or checked: a request with a good key costs no extra round trip, and a neighbour's broken key
 * behind the same address does not lock out a working integration.
 */
export function createKeyFailureThrottle(deps: { limiters: RateLimiters; perIp: number; windowSeconds: number }): KeyFailureThrottle {
  const byIp = deps.limiters.limiter({ name: 'apikey-failures-ip', points: deps.perIp, windowSeconds: deps.windowSeconds });
  return {
    async refused(ip, refusal) {
      const admission = await byIp.take(ip ?? 'unknown');
      return admission.allowed ? refusal : throttled(KEY_FAILURES_MESSAGE, admission.retryAfterMs);
    },
  };
}
