import type { Db } from '../adapters/db/knex.js';
import { badRequest } from '../domain/errors.js';
import type { Principal } from '../http/principal.js';

export type Interval = 'hour' | 'day';
export const COUNT_KINDS = ['sent', 'delivered', 'bounced', 'complained', 'opened', 'clicked'] as const;
type Kind = (typeof COUNT_KINDS)[number];
export type Bucket = { at: string } & Record<Kind, number>;

const MS: Record<Interval, number> = { hour: 3_600_000, day: 86_400_000 };
/** A chart wider than this is unreadable, and a hint that `interval` is wrong. */
const MAX_BUCKETS = 1000;
const DEFAULT_SPAN: Record<Interval, number> = { hour: 48, day: 30 };

/**
 * Message activity over time from the counts read model (`message_counts`): one row per hour that
 * had activity, summed into the requested buckets and padded with zeros, never a scan of messages.
 * An API key sees only what it sent itself, like the list.
 */
export function createMessageCountQueries(deps: { db: Db; now?: () => Date }) {
  const now = deps.now ?? (() => new Date());
  return {
    async timeseries(principal: Principal, q: { from?: string; to?: string; interval: Interval }) {
      const step = MS[q.interval];
      const to = q.to ? new Date(q.to) : now();
      const from = q.from ? new Date(q.from) : new Date(to.getTime() - DEFAULT_SPAN[q.interval] * step);
      if (from.getTime() > to.getTime()) throw badRequest('from must not be after to');
      const first = Math.floor(from.getTime() / step) * step;
      if ((to.getTime() - first) / step > MAX_BUCKETS) throw badRequest(`the range holds more than ${MAX_BUCKETS} ${q.interval}s: choose a wider interval or a shorter range`);
      const rows = await deps.db('message_counts')
        .where('account_id', principal.accountId)
        .modify((b) => {
          if (principal.kind === 'apiKey') b.andWhere('api_key_id', principal.apiKeyId);
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
