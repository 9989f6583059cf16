/**
 * The rate limiter port: attempts counted per key in windows that every process of a deployment
 * shares, so a client cannot spread its attempts over the API processes. Adapters: PostgreSQL (the
 * default) and Redis (with REDIS_URL).
 */
export interface RateLimit {
  /** names the counter: limits with different names count the same key apart */
  name: string;
  /** attempts allowed in one window */
  points: number;
  /** the window's length; it opens with the first attempt counted and does not slide */
  windowSeconds: number;
}

/** Whether a counted attempt is within the limit; when not, how long until the window closes. */
export type Admission = { allowed: true } | { allowed: false; retryAfterMs: number };

export interface RateLimiter {
  /** Counts one attempt for `key`, atomically: of attempts made together, no more than `points` are allowed. */
  take(key: string): Promise<Admission>;
  /** Takes back one attempt `take` counted (one that turned out not to count, such as a success). */
  giveBack(key: string): Promise<void>;
  /** Forgets every attempt counted for `key`. */
  clear(key: string): Promise<void>;
}

/** The limiter's store could not count (Redis away, the database away): the attempt is neither allowed nor refused. */
export class RateLimiterUnavailable extends Error {
  constructor(cause: unknown) {
    super(`the rate limiter's store is unavailable: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'RateLimiterUnavailable';
  }
}

export interface RateLimiters {
  limiter(limit: RateLimit): RateLimiter;
  close(): Promise<void>;
}
