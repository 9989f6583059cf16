/** How far ahead a send may be scheduled: the provider call is a delayed job, and delayed jobs are kept that long. */
export const MAX_SCHEDULE_AHEAD_MS = 30 * 24 * 3600_000;

/**
 * Why `sendAt` cannot be accepted at `now`, or null when it can: it must lie in the future and at most
 * 30 days ahead. The message is the part after the field's name (`sendAt: <problem>`).
 */
export function sendAtProblem(sendAt: Date, now: Date): string | null {
  if (Number.isNaN(sendAt.getTime())) return 'must be an ISO 8601 instant';
  if (sendAt.getTime() <= now.getTime()) return 'must be in the future, at most 30 days ahead';
  if (sendAt.getTime() - now.getTime() > MAX_SCHEDULE_AHEAD_MS) return 'must be at most 30 days ahead';
  return null;
}
