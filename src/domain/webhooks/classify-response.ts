/** SPEC.md §6 retry table, with CONTRACT.md §4: a 3xx is a failed attempt (redirects are never followed). */
export type AttemptOutcome = 'delivered' | 'retry' | 'failed';

export const MAX_ATTEMPTS = 6;

export function classifyAttempt(result: { status?: number; networkError?: string; timedOut?: boolean }): AttemptOutcome {
  if (result.timedOut || result.networkError || result.status === undefined) return 'retry';
  const s = result.status;
  if (s >= 200 && s < 300) return 'delivered';
  if (s === 408 || s === 429 || s >= 500 || (s >= 300 && s < 400)) return 'retry';
  return 'failed';
}

/** Delay before attempt `attempt + 1` after attempt `attempt` failed; null when no attempt is left. */
export function nextAttemptDelay(attempt: number, delaysMs: number[]): number | null {
  if (attempt >= MAX_ATTEMPTS) return null;
  return delaysMs[attempt - 1] ?? null;
}

/** Retry-After as milliseconds from `now` (seconds or an HTTP date); null when absent or unreadable. */
export function parseRetryAfter(header: string | undefined, now: Date): number | null {
  if (!header) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, at - now.getTime());
}
