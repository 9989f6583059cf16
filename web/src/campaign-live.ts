/** How long after its fan-out ends a sent campaign's stats are read again for what providers report late (deliveries, bounces, opens). */
export const SETTLING_MS = 10 * 60_000;

type Live = { status: string; finishedAt?: string | null; stats?: unknown };

/**
 * Whether a campaign's row can change with nobody acting on it: while it fans out; while messages it
 * queued are still queued or scheduled (a sent or paused campaign's sends go on); and, once sent, for
 * a while after, as providers report what became of them. A draft, a cancelled campaign, or one long
 * sent does not change by itself, so a page of only those is not read again.
 */
export function stillChanging(c: Live, now: number): boolean {
  if (c.status === 'sending') return true;
  if (c.status !== 'sent' && c.status !== 'paused') return false;
  const counts = (c.stats as { status?: Record<string, number> } | undefined)?.status ?? {};
  if ((counts.queued ?? 0) + (counts.scheduled ?? 0) > 0) return true;
  return c.status === 'sent' && !!c.finishedAt && now - Date.parse(c.finishedAt) < SETTLING_MS;
}
