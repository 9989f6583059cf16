import type { Db } from './adapters/db/knex.js';
import { createPrometheusMetrics, type MetricsSnapshot } from './adapters/metrics/prometheus.js';
import type { EventStore, Position } from './ports/event-store.js';
import type { JobQueue } from './ports/job-queue.js';
import { createLagReader, type LogFollower } from './projections/lag.js';

/** A follower this many events behind (or more) is not current enough to serve: readiness fails. */
export const READY_MAX_LAG_EVENTS = 5_000;
/**
 * A follower with events to handle whose checkpoint has not moved for this long is stalled (no worker
 * runs it): readiness fails, however few the events, since what it serves no longer follows the log.
 */
export const READY_STALL_MS = 30_000;
// A store that accepts connections but never answers must not hold a probe open.
const CHECK_TIMEOUT_MS = 3_000;

/** `check`, or a rejection once it has taken `ms`. */
export function within<T>(check: Promise<T>, ms = CHECK_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([check, timeout]).finally(() => clearTimeout(timer));
}

const why = (err: unknown) => (err instanceof Error ? err.message : String(err)).split('\n')[0] || 'unreachable';

export type Readiness = {
  ready: boolean;
  checks: Record<string, { ok: boolean; detail?: string }>;
};

/** Another thread of this process running a role of its own (the `all` role's workers). */
export interface ThreadObservability {
  snapshot(): Promise<MetricsSnapshot>;
  readiness(): Promise<Readiness>;
}

/**
 * One process's metrics and readiness. The roles it runs say what it follows (`follow`): the read
 * models and process managers whose lag it reports and needs current, the queues whose depth it reports
 * and needs reachable.
 */
export function createObservability(deps: { db: Db; eventStore: EventStore; queue: JobQueue; logInDatabase: boolean; now?: () => number }) {
  const now = deps.now ?? Date.now;
  const prometheus = createPrometheusMetrics();
  // per follower: the checkpoint it was first seen at with events pending, and when
  const waiting = new Map<string, { at: string; since: number }>();
  const lag = createLagReader(deps);
  const followers = new Map<string, LogFollower>();
  const queues = new Set<string>();
  const threads: ThreadObservability[] = [];
  // A joined workers thread follows every read model, process manager and queue this thread would
  // (the worker role follows them all): its lag and depth stand for the process, not read twice.
  const followed = () => (threads.length ? [] : [...followers.values()]);

  prometheus.addScrapedGauge({
    name: 'courier_log_follower_lag_events',
    help: 'Events in the log a read model (projection) or process manager has still to handle, counted over the newest 10,000',
    labelNames: ['kind', 'name'],
    async collect(set) {
      for (const { follower, events } of await lag.lag(followed())) set({ kind: follower.kind, name: follower.name }, events);
    },
  });
  prometheus.addScrapedGauge({
    name: 'courier_queue_depth',
    help: 'Jobs waiting in a queue (due or delayed), not running',
    labelNames: ['queue'],
    async collect(set) {
      if (!deps.queue.depth || threads.length) return;
      for (const name of queues) set({ queue: name }, await deps.queue.depth(name));
    },
  });

  return {
    prometheus,
    metrics: prometheus.metrics,
    follow(more: { followers?: LogFollower[]; queues?: string[] }) {
      for (const f of more.followers ?? []) followers.set(`${f.kind}:${f.name}`, f);
      for (const q of more.queues ?? []) queues.add(q);
    },
    /** Adds a thread's series to the exposition and its checks to readiness; its lag and queue depths stand for this thread's. */
    join(thread: ThreadObservability) {
      threads.push(thread);
    },
    async exposition() {
      // a thread that does not answer leaves its series out of this scrape, not the process's
      return prometheus.exposition(await Promise.all(threads.map((t) => within(t.snapshot()).catch((): MetricsSnapshot => []))));
    },
    /** Whether this process can do its roles' work now, and what stops it when it cannot. */
    async readiness(): Promise<Readiness> {
      const [own, ...others] = await Promise.all([
        ownReadiness(),
        ...threads.map((t) => within(t.readiness()).catch((err): Readiness => ({ ready: false, checks: { workers: { ok: false, detail: why(err) } } }))),
      ]);
      // a check is passed when every thread that makes it passes it
      const checks = { ...own.checks };
      for (const other of others) for (const [name, check] of Object.entries(other.checks)) if (!checks[name] || !check.ok) checks[name] = check;
      return { ready: Object.values(checks).every((c) => c.ok), checks };
    },
  };

  async function ownReadiness(): Promise<Readiness> {
    const checks: Readiness['checks'] = {};
    const check = async (name: string, run: () => Promise<string | null>) => {
      try {
        const problem = await within(run());
        checks[name] = problem ? { ok: false, detail: problem } : { ok: true };
      } catch (err) {
        checks[name] = { ok: false, detail: why(err) };
      }
    };
    await Promise.all([
      check('database', async () => (await deps.db.raw('SELECT 1'), null)),
      check('eventStore', async () => (await deps.eventStore.readStream('$healthcheck'), null)),
      ...(deps.queue.depth && queues.size ? [check('queue', async () => (await deps.queue.depth!([...queues][0]), null))] : []),
    ]);
    if (checks.database.ok && checks.eventStore.ok && followed().length) {
      await check('readModels', async () => {
        const lags = await lag.lag(followed());
        const behind = lags.filter((l) => l.events >= READY_MAX_LAG_EVENTS).map((l) => l.follower.name);
        const stalled = lags.filter((l) => stalledFor(l) >= READY_STALL_MS).map((l) => l.follower.name);
        // A release's read models are rebuilt beside the live ones: until the switch this process's code
        // would query tables of another shape (or, for an older process, after it).
        const otherVersion = lags.filter((l) => l.follower.version !== undefined && l.liveVersion !== null && l.liveVersion !== l.follower.version);
        const problems = [
          ...(otherVersion.length
            ? [`read models of another version than this process's (being rebuilt for a release, or this process is older than the data): ${otherVersion.map((l) => `${l.follower.name} v${l.liveVersion}, code v${l.follower.version}`).join(', ')}`]
            : []),
          ...(behind.length ? [`behind the log by ${READY_MAX_LAG_EVENTS} events or more: ${behind.join(', ')}`] : []),
          ...(stalled.length ? [`not following the log for ${READY_STALL_MS / 1000} s (is a worker running?): ${stalled.join(', ')}`] : []),
        ];
        return problems.length ? problems.join('; ') : null;
      });
    }
    return { ready: Object.values(checks).every((c) => c.ok), checks };
  }

  /** How long a follower has had events to handle without its checkpoint moving (0: it has none, or moved). */
  function stalledFor(l: { follower: LogFollower; events: number; at: Position }): number {
    const name = `${l.follower.kind}:${l.follower.name}`;
    const at = `${l.at.commit}/${l.at.prepare}`;
    const seen = waiting.get(name);
    if (l.events === 0) {
      waiting.delete(name);
      return 0;
    }
    if (seen?.at !== at) {
      waiting.set(name, { at, since: now() });
      return 0;
    }
    return now() - seen.since;
  }
}
export type Observability = ReturnType<typeof createObservability>;
