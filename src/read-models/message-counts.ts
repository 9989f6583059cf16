import type { Db } from '../adapters/db/knex.js';
import { badRequest } from '../domain/errors.js';
import type { MessageStatus } from '../domain/messages/message.js';
import type { Principal } from '../domain/principal.js';
import { countLabel, labelsOf } from '../projections/message-counts.js';

export type Interval = 'hour' | 'day';
export const COUNT_KINDS = ['sent', 'delivered', 'bounced', 'complained', 'opened', 'clicked'] as const;
type Kind = (typeof COUNT_KINDS)[number];
export type Bucket = { at: string } & Record<Kind, number>;

const MS: Record<Interval, number> = { hour: 3_600_000, day: 86_400_000 };
/** A chart wider than this is unreadable, and a hint that `interval` is wrong. */
const MAX_BUCKETS = 1000;
const DEFAULT_SPAN: Record<Interval, number> = { hour: 48, day: 30 };

export interface TimeseriesQuery {
  from?: string;
  to?: string;
  interval: Interval;
  /** messages whose current status is this one */
  status?: MessageStatus;
  tags?: string[];
  metadata?: Record<string, string>;
  search?: string;
}

/**
 * The one count row label a query reads: the counts are kept per tag and per metadata entry, not
 * per combination of them nor per text, so a filter they cannot answer is refused, never ignored.
 */
function labelOf(q: TimeseriesQuery): string {
  if (q.search) {
    throw badRequest('search cannot filter the chart: its counts are kept per status, tag and metadata entry, not per text (search narrows the list only)');
  }
  const labels = labelsOf(q);
  if (labels.length > 1) {
    throw badRequest('tag and metadata: the chart filters on one tag or one metadata entry at a time (its counts are kept per tag and per entry, not per combination)');
  }
  return labels[0] ?? countLabel.all;
}

/**
 * Message activity over time from the counts read model (`message_counts`): the rows of one label
 * (every message, one tag or one metadata entry) per hour that had activity, summed into the
 * requested buckets and padded with zeros, never a scan of messages. An API key sees only what it
 * sent itself, like the list; `status` keeps the activity of the messages now in that status.
 */
export function createMessageCountQueries(deps: { db: Db; now?: () => Date }) {
  const now = deps.now ?? (() => new Date());
  return {
    async timeseries(principal: Principal, q: TimeseriesQuery) {
      const label = labelOf(q);
      const step = MS[q.interval];
      const to = q.to ? new Date(q.to) : now();
      const from = q.from ? new Date(q.from) : new Date(to.getTime() - DEFAULT_SPAN[q.interval] * step);
      if (from.getTime() > to.getTime()) throw badRequest('from must not be after to');
      const first = Math.floor(from.getTime() / step) * step;
      if ((to.getTime() - first) / step > MAX_BUCKETS) throw badRequest(`the range holds more than ${MAX_BUCKETS} ${q.interval}s: choose a wider interval or a shorter range`);
      const rows = await deps.db('message_counts')
        .where({ account_id: principal.accountId, label })
        .modify((b) => {
          if (principal.kind === 'apiKey') b.andWhere('api_key_id', principal.apiKeyId);
          if (q.status) b.andWhere('status', q.status);
        })
        .andWhere('hour', '>=', new Date(first))
        .andWhere('hour', '<=', to)
        .select('hour', 'kind', deps.db.raw('sum(n)::bigint AS n'))
        .groupBy('hour', 'kind');
      const buckets = new Map<number, Bucket>();
      for (let at = first; at <= to.getTime(); at += step) {
        buckets.set(at, { at: new Date(at).toISOString(), ...(Object.fromEntries(COUNT_KINDS.map((k) => [k, 0])) as Record<Kind, number>) });
      }
      for (const r of rows) {
        const at = Math.floor(new Date(r.hour).getTime() / step) * step;
        const bucket = buckets.get(at);
        if (bucket) bucket[r.kind as Kind] += Number(r.n);
      }
      return { interval: q.interval, from: new Date(first).toISOString(), to: to.toISOString(), buckets: [...buckets.values()] };
    },
  };
}
export type MessageCountQueries = ReturnType<typeof createMessageCountQueries>;
