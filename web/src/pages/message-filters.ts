/**
 * The /messages page's filters as its URL holds them (so a view can be shared), and what the list
 * and the chart ask the API for. The list takes them all; the chart is drawn from counts kept per
 * status, tag and metadata entry, so it follows the status, the dates and one tag or metadata entry,
 * and the page names the filters it does not follow (search, further tags and entries).
 */
export interface MessageFilters {
  search: string;
  status: string;
  /** YYYY-MM-DD calendar days of the browser's time zone (the one times are shown in) */
  from: string;
  to: string;
  tags: string[];
  metadata: [key: string, value: string][];
  cursor: string;
}

const METADATA_PARAM = /^metadata\[(.+)\]$/;
const DAY = 86_400_000;

/**
 * A date input's day as the instant it starts (from) or ends (to) in the browser's time zone, which
 * is the zone the page shows times in (a date-time without an offset is read as local time).
 */
const localInstant = (d: string, time: string) => {
  if (!d) return undefined;
  const at = new Date(`${d}T${time}`);
  // not a day (a URL edited by hand): passed on as it is, for the API to refuse in words
  return Number.isNaN(at.getTime()) ? d : at.toISOString();
};
export const dayStart = (d: string) => localInstant(d, '00:00:00.000');
export const dayEnd = (d: string) => localInstant(d, '23:59:59.999');

export function readFilters(query: URLSearchParams): MessageFilters {
  const metadata: [string, string][] = [];
  for (const [name, value] of query) {
    const m = METADATA_PARAM.exec(name);
    if (m) metadata.push([m[1], value]);
  }
  return {
    search: query.get('search') ?? '',
    status: query.get('status') ?? '',
    from: query.get('from') ?? '',
    to: query.get('to') ?? '',
    tags: query.getAll('tag').filter(Boolean),
    metadata,
    cursor: query.get('cursor') ?? '',
  };
}

/** The page's URL for these filters, empty ones left out. */
export function filtersUrl(f: MessageFilters): string {
  const q = new URLSearchParams();
  for (const name of ['search', 'status', 'from', 'to'] as const) if (f[name]) q.set(name, f[name]);
  for (const tag of f.tags) q.append('tag', tag);
  for (const [key, value] of f.metadata) q.append(`metadata[${key}]`, value);
  if (f.cursor) q.set('cursor', f.cursor);
  const s = q.toString();
  return s ? `/messages?${s}` : '/messages';
}

const labelParams = (tags: string[], metadata: [string, string][]) => ({
  ...(tags.length ? { tag: tags } : {}),
  ...Object.fromEntries(metadata.map(([k, v]) => [`metadata[${k}]`, v])),
});

/**
 * A query as a URL writes it, names encoded as well as values: openapi-fetch encodes only the values,
 * and a metadata key is any text (`metadata[50% & more]`). A list is the name repeated.
 */
export function queryString(query: Record<string, unknown>): string {
  const q = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    for (const v of Array.isArray(value) ? value : [value]) if (v !== undefined && v !== null) q.append(name, String(v));
  }
  return q.toString();
}

/** The query of GET /api/messages: every filter. */
export function listQuery(f: MessageFilters) {
  return {
    search: f.search || undefined,
    status: f.status || undefined,
    from: dayStart(f.from),
    to: dayEnd(f.to),
    cursor: f.cursor || undefined,
    limit: 25,
    ...labelParams(f.tags, f.metadata),
  };
}

/**
 * The query of GET /api/messages/timeseries: the chosen days (the last 30 without a range), per hour
 * when that is three days or less, the status and the first tag (or else metadata entry); and, in
 * words, the filters it leaves to the list.
 */
const instant = (iso: string | undefined) => {
  const at = iso ? new Date(iso) : undefined;
  return at && !Number.isNaN(at.getTime()) ? at : undefined;
};

export function chartQuery(f: MessageFilters, now = new Date()) {
  // a day that is none (a URL edited by hand) is left to the list, which shows the API's refusal
  const to = instant(dayEnd(f.to)) ?? now;
  const from = instant(dayStart(f.from)) ?? new Date(to.getTime() - 30 * DAY);
  const interval: 'hour' | 'day' = to.getTime() - from.getTime() <= 3 * DAY ? 'hour' : 'day';
  const labels = [...f.tags.map((t) => ({ tag: t })), ...f.metadata.map(([k, v]) => ({ metadata: [k, v] as [string, string] }))];
  const [charted, ...left] = labels;
  const notFollowed = [
    ...(f.search ? [`search “${f.search}”`] : []),
    ...left.map((l) => ('tag' in l ? `tag ${l.tag}` : `metadata ${l.metadata[0]}=${l.metadata[1]}`)),
  ];
  return {
    interval,
    query: {
      from: from.toISOString(),
      to: to.toISOString(),
      interval,
      status: f.status || undefined,
      ...(charted ? ('tag' in charted ? labelParams([charted.tag], []) : labelParams([], [charted.metadata])) : {}),
    },
    notFollowed,
  };
}
