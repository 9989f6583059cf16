import type { Db } from '../adapters/db/knex.js';
import type { RateLimiter, RateLimiters } from '../ports/rate-limiter.js';
import { providerRatePerSecond } from '../read-models/accounts.js';

/** How long a worker keeps an account's rate setting before reading it again. */
const SETTING_TTL_MS = 1_000;

/**
 * The longest window, about 136 years: its end in epoch milliseconds stays an exact integer in the
 * PostgreSQL limiter's bigint and a Redis TTL (a window of 1e300 seconds overflowed the bigint and
 * stopped every send of the account). A slower rate is one call in this window.
 */
const MAX_WINDOW_SECONDS = 2 ** 32;
/** The most calls a window may count: the PostgreSQL limiter counts in a 32-bit integer. A faster rate is this many. */
const MAX_POINTS = 2_147_483_647;
/** setTimeout's longest delay (a longer one fires at once). */
const MAX_SLEEP_MS = 2_147_483_647;

/**
 * A rate as whole calls per whole-second window (the limiter counts in fixed windows): the nearest it
 * can count at or under the rate (below 1/s, one call every ceil(1/rate) seconds), but for a rate
 * slower than one call in the longest window, which gets that one.
 */
function windowOf(rate: number): { points: number; windowSeconds: number } {
  if (rate >= 1) return { points: Math.min(Math.floor(rate), MAX_POINTS), windowSeconds: 1 };
  return { points: 1, windowSeconds: Math.min(Math.ceil(1 / rate), MAX_WINDOW_SECONDS) };
}

/**
 * The account's provider rate (`providerRatePerSecond`), shared by every worker process through the
 * deployment's rate limiter (PostgreSQL or Redis). Transactional sends come first: a campaign send
 * may not take the last fifth of a window's calls (at least one, when the window has two or more), and
 * one refused gives back the count it took, so it never eats into what transactional sends may use.
 */
export function createProviderRate(deps: {
  db: Db;
  limiters: RateLimiters;
  sleep?: (ms: number) => Promise<void>;
  /** how long a wait sleeps before it looks at the account's rate again (default: as long as a rate is kept) */
  waitStepMs?: number;
}) {
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const waitStep = deps.waitStepMs ?? SETTING_TTL_MS;
  // The read itself is kept, not only its answer: the sends that ask together once it is stale wait for
  // one read (at 80 sends in flight they made one statement each, 4 a second during a campaign).
  const settings = new Map<string, { rate: Promise<number | null>; until: number }>();
  const limiters = new Map<string, RateLimiter>();

  function rateOf(accountId: string): Promise<number | null> {
    const known = settings.get(accountId);
    if (known && known.until > Date.now()) return known.rate;
    const rate = providerRatePerSecond(deps.db, accountId);
    const entry = { rate, until: Infinity };
    settings.set(accountId, entry);
    rate.then(
      () => (entry.until = Date.now() + SETTING_TTL_MS),
      // a failed read is not kept: the next send reads again
      () => settings.get(accountId) === entry && settings.delete(accountId),
    );
    return rate;
  }

  function limiterFor(points: number, windowSeconds: number): RateLimiter {
    // Both kinds count under one name per window length, so they share the account's counter.
    const id = `${points}/${windowSeconds}`;
    let limiter = limiters.get(id);
    if (!limiter) {
      limiter = deps.limiters.limiter({ name: `provider-rate-${windowSeconds}s`, points, windowSeconds });
      limiters.set(id, limiter);
    }
    return limiter;
  }

  return {
    /**
     * Waits until the account may make one more provider call (at once when it has no rate), and
     * answers null; or, given `holdMs`, when that would be longer, answers when to ask again instead
     * of waiting: a send holds a worker's slot while it waits, and a slow account's sends held every
     * slot, every other account's sends waiting behind them.
     */
    async take(accountId: string, kind: 'transactional' | 'campaign', options: { holdMs?: number } = {}): Promise<Date | null> {
      const started = Date.now();
      // A wait is slept a step at a time, the account's rate looked at between steps: a rate lifted or
      // changed meanwhile counts within a step (a wait of a slow rate's whole window, up to 24 days a
      // timer, kept the sends of a lifted limit waiting), and the same one is asked again when its
      // window has ended.
      let waiting: { limiter: RateLimiter; until: number } | undefined;
      for (;;) {
        const rate = await rateOf(accountId);
        if (rate === null) return null;
        const { points, windowSeconds } = windowOf(rate);
        const reserved = kind === 'campaign' && points >= 2 ? Math.max(1, Math.floor(points / 5)) : 0;
        const limiter = limiterFor(points - reserved, windowSeconds);
        const left = waiting?.limiter === limiter ? waiting.until - Date.now() : 0;
        if (left > 0) {
          await sleep(Math.min(left, waitStep, MAX_SLEEP_MS));
          continue;
        }
        const admission = await limiter.take(accountId);
        if (admission.allowed) return null;
        await limiter.giveBack(accountId);
        // Campaign sends look again a tenth of a window later, so that transactional sends waiting
        // for the same window go first even when the store answers slowly under load (at 50 ms a
        // busy CI machine let a campaign send in ahead of them).
        waiting = { limiter, until: Date.now() + admission.retryAfterMs + (kind === 'campaign' ? windowSeconds * 100 : 0) + Math.random() * 20 };
        if (options.holdMs !== undefined && waiting.until - started > options.holdMs) return new Date(waiting.until);
      }
    },
  };
}
export type ProviderRate = ReturnType<typeof createProviderRate>;
