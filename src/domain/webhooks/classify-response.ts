/**
 * The retry table of docs/webhooks.md (a 3xx is a failed attempt, never followed). Only a 4xx other than 408/429 says "this will never
 * work"; everything else short of a 2xx (5xx, 3xx since redirects are never followed, an informational
 * or out-of-range status, a network error, a timeout) may work later, so it is retried.
 */
export type AttemptOutcome = 'delivered' | 'retry' | 'failed';

export interface AttemptResult {
  status?: number;
  networkError?: string;
  timedOut?: boolean;
}

export const MAX_ATTEMPTS = 6;
/** A receiver's Retry-After is honoured up to this long; beyond it a receiver could park a delivery forever. */
export const RETRY_AFTER_MAX_MS = 60 * 60 * 1000;

export function classifyAttempt(result: AttemptResult): AttemptOutcome {
  if (result.timedOut || result.networkError || result.status === undefined) return 'retry';
  const status = result.status;
  if (status >= 200 && status < 300) return 'delivered';
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) return 'failed';
  return 'retry';
}

/**
 * The wait before attempt `attempt + 1` once attempt `attempt` (1-based) failed: `delaysMs[attempt - 1]`
 * (WEBHOOK_RETRY_DELAYS_MS holds the delays before attempts 2..6). Null when no attempt is left:
 * after the 6th, or when the configured delays run out first.
 */
export function nextAttemptDelay(attempt: number, delaysMs: readonly number[]): number | null {
  if (!Number.isInteger(attempt) || attempt < 1 || attempt >= MAX_ATTEMPTS) return null;
  const delay = delaysMs[attempt - 1];
  return delay === undefined || !Number.isFinite(delay) || delay < 0 ? null : delay;
}

/** Day-name start of the three HTTP-date forms (IMF-fixdate, RFC 850, asctime); rules out bare numbers Date.parse would take. */
const HTTP_DATE = /^[A-Za-z]{3,9},? /;

/**
 * Retry-After (RFC 9110 §10.2.3) as milliseconds from `now`: delta-seconds or an HTTP-date, a date in
 * the past meaning 0, capped at `maxMs`. Null when absent or unreadable (the caller keeps its backoff).
 */
export function parseRetryAfter(header: string | undefined | null, now: Date, maxMs: number = RETRY_AFTER_MAX_MS): number | null {
  const value = header?.trim();
  if (!value) return null;
  let ms: number;
  if (/^\d+$/.test(value)) {
    ms = Number(value) * 1000;
  } else if (HTTP_DATE.test(value)) {
    const at = Date.parse(value);
    if (Number.isNaN(at)) return null;
    ms = Math.max(0, at - now.getTime());
  } else {
    return null;
  }
  return Math.min(ms, maxMs);
}
