import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { query, type Db } from './knex.js';
import { createGroupCommit } from '../../group-commit.js';
import type { JobQueue } from '../../ports/job-queue.js';

export interface SideEffect {
  /** unique per (event, target): deciding the same effect twice records it once */
  id: string;
  /** the job name that performs it */
  kind: string;
  payload: Record<string, unknown>;
  runAfter: Date;
  /** effects with the same key run one at a time, in the order they were decided */
  orderingKey?: string;
  /** set by the sweeper for an effect long overdue: its job gets an id of its own (see jobIdOf) */
  requeue?: string;
}

export interface SideEffectJob {
  sideEffectId: string;
  /**
   * The effect's `runAfter` (ms since the epoch) when this job was queued for it: a job queued before
   * the effect was rescheduled to a later time has an earlier one, and leaves the effect to the later
   * job. (Absent from jobs queued by versions before it.)
   */
  dueAt?: number;
  [key: string]: unknown;
}

// The job id names the effect and the time it is due: a re-enqueue of the same schedule is a no-op,
// a retry scheduled for later is a new job. An effect the sweeper finds long overdue gets a job of
// its own as well: a job of the plain id that the queue keeps but never runs must not hold it forever.
const jobIdOf = (e: Pick<SideEffect, 'id' | 'runAfter' | 'requeue'>) => `${e.id}@${e.runAfter.getTime()}${e.requeue ? `~${e.requeue}` : ''}`;

/** Records effects not recorded yet (unique by id: the first to record one wins); returns those it recorded. */
export async function recordSideEffects(db: Knex, effects: SideEffect[]): Promise<SideEffect[]> {
  if (effects.length === 0) return [];
  const rows = await db('side_effects')
    .insert(
      effects.map((e) => ({ id: e.id, kind: e.kind, payload: JSON.stringify(e.payload), run_after: e.runAfter, ordering_key: e.orderingKey ?? null })),
    )
    .onConflict('id')
    .ignore()
    .returning('id');
  const inserted = new Set(rows.map((r: { id: string }) => r.id));
  return effects.filter((e) => inserted.has(e.id));
}

export async function enqueueSideEffects(queue: JobQueue, effects: SideEffect[]): Promise<void> {
  await Promise.all(
    effects.map((e) =>
      queue.enqueue<SideEffectJob>(e.kind, { ...e.payload, sideEffectId: e.id, dueAt: e.runAfter.getTime() }, {
        jobId: jobIdOf(e),
        delayMs: Math.max(0, e.runAfter.getTime() - Date.now()),
      }),
    ),
  );
}

export interface Claim {
  /**
   * The effect was taken from a worker whose lease ran out (it died, or gave up without knowing how
   * its run ended): what that run did is unknown.
   */
  leaseLost: boolean;
  /** when that lease ran out (the lost run ended by then at the latest) */
  lostAt?: Date;
}

/**
 * How long a claim holds without a heartbeat. The worker holding it renews it every third of that,
 * so only a worker that died (or lost its database for that long) loses it, and the sweeper hands
 * its effects to another worker within seconds of the lease ending rather than minutes.
 */
export const LEASE_MS = 15_000;

export interface SideEffectLeases {
  /**
   * Takes the effect for one worker, for a lease renewed while it runs: a second delivery of the same job, or a
   * job re-run while the first run is still going, finds it taken and gets false. A worker that dies
   * loses the claim when the lease ends, and the sweeper queues the effect again. `job` is the job
   * that asks: one queued for an earlier time than the effect is now due (rescheduled since) gets null.
   */
  claim(job: SideEffectJob): Promise<Claim | null>;
  /**
   * Stops renewing a claim: from its taking until `letGo` (or `markDone`), this worker renews it
   * every third of the lease, so a run that waits or calls a slow provider keeps its effect, and
   * only a worker that died (or lost its database for a whole lease) loses it.
   */
  letGo(id: string): void;
  /**
   * Marks an effect done and, in the same statement, makes the next pending effect under its ordering
   * key due now and queues it, instead of leaving it to its own retry timer (a webhook delivery waiting
   * on its predecessor looks again only every PREDECESSOR_WAIT_MS).
   */
  markDone(id: string): Promise<void>;
}

/**
 * Claims and completions for a worker's handlers. Handlers running side by side (sixteen per job kind)
 * claim and complete in one statement per batch instead of one round trip each.
 */
export function createSideEffectLeases(db: Db, queue: JobQueue, options: { leaseMs?: number; logger?: Pick<Logger, 'warn'> } = {}): SideEffectLeases {
  const leaseMs = options.leaseMs ?? LEASE_MS;
  // One statement a tick renews every claim this worker holds.
  const held = new Set<string>();
  let heartbeat: NodeJS.Timeout | undefined;
  const beat = async () => {
    if (held.size === 0) return;
    try {
      await db('side_effects')
        .whereIn('id', [...held.keys()])
        .andWhere('status', 'running')
        .update({ claimed_until: db.raw(`now() + ? * interval '1 millisecond'`, [leaseMs]) });
    } catch (err) {
      options.logger?.warn({ err }, 'side-effect lease renewal failed');
    }
  };
  const hold = (id: string) => {
    held.add(id);
    if (!heartbeat) {
      heartbeat = setInterval(() => void beat(), Math.max(50, Math.floor(leaseMs / 3)));
      heartbeat.unref();
    }
  };
  const letGo = (id: string) => {
    held.delete(id);
    if (held.size === 0 && heartbeat) {
      clearInterval(heartbeat);
      heartbeat = undefined;
    }
  };

  const claims = createGroupCommit<{ id: string; leaseMs: number; dueAt: Date | null }, Claim | null>(async (items) => {
    // The rows are locked and read before the update, which cannot return what it overwrote; a
    // concurrent claimer waits on the lock and then re-checks the conditions on the claimed row.
    // An older job of a rescheduled effect leaves it to the job for the new time. Which job is which is
    // told by the time each was queued for, not by the clock: run_after comes from the clock of the
    // process that scheduled it, and one running a few seconds ahead of the database would otherwise
    // have every effect it schedules look not yet due, left to the sweeper a minute later. (Jobs
    // without that time fall back to the clock, with a second of tolerance.)
    // Each asked id comes back, claimed or not, saying whether this database has the effect at all.
    const rows = await query<{ id: string; claimed: boolean; known: boolean; lease_lost: boolean; lost_at: Date | null }>(
      db,
      `WITH asked AS (
         SELECT id, max(lease_ms) AS lease_ms, max(due_at) AS due_at
         FROM unnest($1::text[], $2::int[], $3::timestamptz[]) AS u (id, lease_ms, due_at) GROUP BY id
       ),
       claimable AS (
         SELECT s.id, c.lease_ms, s.status = 'running' AS lease_lost, s.claimed_until AS lost_at
         FROM side_effects s JOIN asked c ON c.id = s.id
         WHERE s.run_after <= coalesce(c.due_at, now() + interval '1 second')
           AND (s.status = 'pending' OR (s.status = 'running' AND s.claimed_until < now()))
         FOR UPDATE OF s
       ),
       claimed AS (
         UPDATE side_effects s SET status = 'running', claimed_until = now() + k.lease_ms * interval '1 millisecond'
         FROM claimable k WHERE s.id = k.id
         RETURNING s.id, k.lease_lost, k.lost_at
       )
       SELECT a.id, c.id IS NOT NULL AS claimed, EXISTS (SELECT 1 FROM side_effects s WHERE s.id = a.id) AS known, c.lease_lost, c.lost_at
       FROM asked a LEFT JOIN claimed c ON c.id = a.id`,
      [items.map((i) => i.id), items.map((i) => i.leaseMs), items.map((i) => i.dueAt)],
    );
    for (const r of rows) {
      if (r.known) continue;
      // Never recorded here: most likely a job queued by another deployment sharing this job queue
      // (one Redis and REDIS_PREFIX for two databases), whose worker then never gets to run it.
      options.logger?.warn(
        { sideEffectId: r.id },
        'a job names a side effect this database does not have: is another deployment sharing the job queue (the same Redis and REDIS_PREFIX)? Give each its own REDIS_PREFIX',
      );
    }
    // the same effect twice in one batch (a job delivered twice): the first asker has it
    const taken = new Map(rows.filter((r) => r.claimed).map((r) => [r.id, r]));
    return items.map((i) => {
      const row = taken.get(i.id);
      taken.delete(i.id);
      if (!row) return null;
      return row.lease_lost ? { leaseLost: true, lostAt: new Date(row.lost_at!) } : { leaseLost: false };
    });
  });

  // A completion's commit does not wait for the WAL flush (set for this statement's transaction only,
  // as it updates its first row): every effect is marked done after the durable record of what it did
  // (the provider's answer, the delivery's outcome, the campaign's last step), so a completion lost
  // with PostgreSQL's last WAL leaves the effect running until its lease ends, and the run that takes
  // it over reads that record and marks it done without doing it again.
  const completions = createGroupCommit<string>(async (ids) => {
    const now = new Date();
    const { rows } = await db.raw(
      `WITH done AS (
         UPDATE side_effects SET status = 'done', claimed_until = NULL, done_at = ?
         WHERE id = ANY(?::text[]) AND set_config('synchronous_commit', 'off', true) IS NOT NULL
         RETURNING ordering_key, seq
       ),
       next AS (
         SELECT DISTINCT ON (n.ordering_key) n.id FROM side_effects n JOIN done ON n.ordering_key = done.ordering_key AND n.seq > done.seq
         WHERE n.status = 'pending' ORDER BY n.ordering_key, n.seq
       )
       UPDATE side_effects s SET run_after = ? FROM next WHERE s.id = next.id RETURNING s.id, s.kind, s.payload`,
      [now, ids, now],
    );
    await enqueueSideEffects(queue, rows.map((r: { id: string; kind: string; payload: Record<string, unknown> }) => ({ ...r, runAfter: now })));
  });

  return {
    async claim(job) {
      const claim = await claims.add({ id: job.sideEffectId, leaseMs, dueAt: typeof job.dueAt === 'number' ? new Date(job.dueAt) : null });
      if (claim) hold(job.sideEffectId);
      return claim;
    },
    markDone: (id) => {
      letGo(id);
      return completions.add(id);
    },
    letGo,
  };
}

/**
 * Locks an effect's row until the end of `trx`, recording it first (pending, due at its `runAfter`)
 * if nobody has yet: its status under the lock. A worker's claim waits on the lock meanwhile.
 */
export async function lockSideEffect(trx: Knex, effect: SideEffect): Promise<string> {
  await recordSideEffects(trx, [effect]);
  const row = await trx('side_effects').where({ id: effect.id }).forUpdate().first('status');
  return row.status as string;
}

/** Marks an effect done without running it (within the transaction that locked it). */
export async function markSideEffectDone(trx: Knex, id: string): Promise<void> {
  await trx('side_effects').where({ id }).update({ status: 'done', claimed_until: null, done_at: new Date() });
}

/** Gives a claim back (the run failed and the queue will retry it). */
export async function releaseSideEffect(db: Db, id: string): Promise<void> {
  await db('side_effects').where({ id, status: 'running' }).update({ status: 'pending', claimed_until: null });
}

/**
 * Ends a claim's lease now and leaves the effect running: the next claim takes it at once, knowing
 * the lease was lost (the run may have done its work).
 */
export async function endLease(db: Db, id: string): Promise<void> {
  await db('side_effects').where({ id, status: 'running' }).update({ claimed_until: db.raw('now()') });
}

/** Our own retry schedule: the effect stays pending, due later, and a job for that time is queued. */
export async function rescheduleSideEffect(db: Db, queue: JobQueue, id: string, runAfter: Date): Promise<void> {
  const [row] = await db('side_effects').where({ id }).update({ run_after: runAfter, status: 'pending', claimed_until: null }).returning(['id', 'kind', 'payload']);
  if (row) await enqueueSideEffects(queue, [{ id: row.id, kind: row.kind, payload: row.payload, runAfter }]);
}

export const SWEEP_INTERVAL_MS = 5_000;
/**
 * How long past due a pending effect is left to its queued job before it is queued again (a job lost
 * with a flushed Redis, or an enqueue that failed with its connection). Queuing one twice is a no-op
 * while the first job exists (same job id), and a run finds the effect claimed or done.
 */
export const SWEEP_GRACE_MS = 20_000;
/**
 * How long past due a pending effect must be before the sweeper queues it under a job id of its own,
 * one a minute: past this, a job of its plain id is not going to run it (a queue that kept the job in
 * a state no worker takes), and running an effect twice is harmless (the second run finds it claimed
 * or done).
 */
export const SWEEP_REQUEUE_MS = 60_000;

/**
 * Finds side effects still pending well after they were due (a crash between commit and enqueue, or a
 * job lost with its queue), or claimed by a worker whose lease ran out, and enqueues them again.
 */
export function startSideEffectSweeper(deps: { db: Db; queue: JobQueue; intervalMs?: number; graceMs?: number; onError?: (err: unknown) => void }) {
  const graceMs = deps.graceMs ?? SWEEP_GRACE_MS;
  const timer = setInterval(async () => {
    try {
      const rows = await deps
        .db('side_effects')
        .where((q) =>
          q
            .where((p) => p.where('status', 'pending').andWhere('run_after', '<', new Date(Date.now() - graceMs)))
            .orWhere((r) => r.where('status', 'running').andWhere('claimed_until', '<', deps.db.fn.now())),
        )
        .orderBy('run_after')
        .limit(500);
      // An effect whose lease ran out is due again from then, under a job id of its own: the queue may
      // still keep the lost run's job, finished by a re-run that found the lease held (pg-boss keeps a
      // finished job's id for 12 h), and an enqueue under that id would be a no-op.
      const now = Date.now();
      await enqueueSideEffects(
        deps.queue,
        rows.map((r) => {
          const runAfter = new Date(r.status === 'running' ? r.claimed_until : r.run_after);
          const overdue = r.status === 'pending' && now - runAfter.getTime() > graceMs + SWEEP_REQUEUE_MS;
          return { id: r.id, kind: r.kind, payload: r.payload, runAfter, ...(overdue ? { requeue: String(Math.floor(now / SWEEP_REQUEUE_MS)) } : {}) };
        }),
      );
    } catch (err) {
      deps.onError?.(err);
    }
    // Often enough that a dead worker's effects are taken over within seconds of its lease ending
    // (the statement reads the open effects' partial index only).
  }, deps.intervalMs ?? SWEEP_INTERVAL_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/**
 * SQL for "an effect decided earlier under the same ordering key is still pending", for the effect
 * whose id is the SQL expression `effectId`: a condition to select alongside what the effect needs anyway.
 */
export const pendingPredecessorSql = (effectId: string) => `EXISTS (
  SELECT 1 FROM side_effects s JOIN side_effects p ON p.ordering_key = s.ordering_key AND p.seq < s.seq
  WHERE s.id = ${effectId} AND p.status IN ('pending', 'running'))`;
