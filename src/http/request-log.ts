/**
 * Path parameters that are identifiers of our own, logged as sent. Any other (a contact's or a
 * suppression's address, an unsubscribe token) is logged as its name: an erased person must not
 * stay readable in the logs, nor a capability be copied out of them.
 */
const IDENTIFIER_PARAMS = new Set(['id', 'messageId', 'position']);

/**
 * How the request log shows a URL, given the routes' patterns (`/api/contacts/:email`): the personal
 * parameters of the route it matches and every query value (a search term, a recipient, a click's
 * target) replaced by their names. The request is logged as it arrives, before express has matched
 * it, so the patterns are matched here.
 */
export function createLoggedUrl(patterns: readonly string[]): (url: string) => string {
  const bySegments = new Map<number, string[][]>();
  for (const pattern of patterns) {
    const segments = pattern.split('/');
    bySegments.set(segments.length, [...(bySegments.get(segments.length) ?? []), segments]);
  }

  /** the pattern matching most segments literally: `/api/contacts/import` before `/api/contacts/:email` */
  function match(segments: string[]): string[] | undefined {
    let best: string[] | undefined;
    let bestLiterals = -1;
    for (const pattern of bySegments.get(segments.length) ?? []) {
      const literals = literalsMatched(pattern, segments);
      if (literals > bestLiterals) [best, bestLiterals] = [pattern, literals];
    }
    return best;
  }

  return (url) => {
    const mark = url.indexOf('?');
    const segments = (mark < 0 ? url : url.slice(0, mark)).split('/');
    const pattern = match(segments);
    const path = segments.map((segment, i) => (pattern?.[i].startsWith(':') && !IDENTIFIER_PARAMS.has(pattern[i].slice(1)) ? pattern[i] : segment)).join('/');
    const keys = mark < 0 ? [] : [...new URLSearchParams(url.slice(mark + 1)).keys()];
    return keys.length === 0 ? path : `${path}?${keys.map((key) => `${encodeURIComponent(key)}=…`).join('&')}`;
  };
}

/** how many of the pattern's literal segments the path has, or -1 if it does not match */
function literalsMatched(pattern: string[], segments: string[]): number {
  let literals = 0;
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i].startsWith(':')) continue;
    if (pattern[i] !== segments[i]) return -1;
    literals++;
  }
  return literals;
}

/** pino-http's serializer of a request: its URL as `loggedUrl` shows it, without the query it parsed. */
export function requestSerializer(loggedUrl: (url: string) => string) {
  return (req: { url?: string; query?: unknown; params?: unknown }) => {
    if (req.url) req.url = loggedUrl(req.url);
    req.query = undefined;
    req.params = undefined;
    return req;
  };
}

/** The probes a load balancer or orchestrator asks every few seconds. */
const PROBES = new Set(['/healthz', '/readyz']);

/**
 * The level a request is logged at: an error when the service failed it; a 503 the service chose is a
 * warning: a probe's, as it answers so every few seconds while a process starts or a store is away
 * (the cause is logged where it happens), and one that tells its client when to come back
 * (`Retry-After`: the database away, a campaign's step still running), as they would bury real errors.
 */
export function requestLogLevel(path: string, status: number, err: unknown, retryAfter = false): 'error' | 'warn' | 'info' {
  if (!err && status === 503 && (retryAfter || PROBES.has(path))) return 'warn';
  return err || status >= 500 ? 'error' : 'info';
}
