/**
 * Opens and clicks that are probably not a person: link scanners and prefetchers.
 * They are still answered (redirected, pixel served) but flagged, and the read models do not count them.
 * Gmail's image proxy and Apple Mail Privacy Protection fetch images on the user's behalf: their opens
 * are counted (as every major provider does), since excluding them would hide most real opens.
 */
const SCANNER_AGENTS = [
  /barracuda/i,
  /mimecast/i,
  /proofpoint/i,
  /safelinks|microsoft office protection|ms-office protection|defender/i,
  /symantec|messagelabs/i,
  /trend ?micro|trendmicro/i,
  /sophos/i,
  /forcepoint|websense/i,
  /fortiguard|fortinet/i,
  /checkpoint|check point/i,
  /\bbot\b|crawler|spider|preview/i,
  /^curl\/|^wget\/|python-requests|go-http-client|headlesschrome|phantomjs/i,
];

/** A click this soon after sending is a scanner following links on delivery. */
const TOO_FAST_MS = 5_000;

export function isSuspectedBot(req: { method: string; userAgent?: string | null; sentAt?: Date | null; now: Date; kind: 'open' | 'click' }): boolean {
  if (req.method.toUpperCase() === 'HEAD') return true;
  const ua = req.userAgent ?? '';
  if (!ua) return req.kind === 'click';
  if (SCANNER_AGENTS.some((re) => re.test(ua))) return true;
  return req.kind === 'click' && Boolean(req.sentAt) && req.now.getTime() - req.sentAt!.getTime() < TOO_FAST_MS;
}
