import type { Knex } from 'knex';
import type { Db } from '../adapters/db/knex.js';
import type { JobQueue } from '../ports/job-queue.js';

export interface SideEffect {
  /** unique per (event, target): deciding the same effect twice records it once */
  id: string;
  /** the job name that performs it */
  kind: string;
  payload: Record<string, unknown>;
  runAfter: Date;
  /** effects with the same key run one at a time, in the order they were decided */
  orderingKey?: string;
}

export interface SideEffectJob {
  sideEffectId: string;
  [key: string]: unknown;
}

// The job id names the effect and the time it is due: a re-enqueue of the same schedule is a no-op,
// a retry scheduled for later is a new job.
const jobIdOf = (e: Pick<SideEffect, 'id' | 'runAfter'>) => `${e.id}@${e.runAfter.getTime()}`;

export async function recordSideEffects(trx: Knex.Transaction, effects: SideEffect[]): Promise<SideEffect[]> {
  if (effects.length === 0) return [];
  const rows = await trx('side_effects')
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
      queue.enqueue<SideEffectJob>(e.kind, { sideEffectId: e.id, ...e.payload }, {
        jobId: jobIdOf(e),
        delayMs: Math.max(0, e.runAfter.getTime() - Date.now()),
      }),
    ),
  );
}

/**
 * Takes the effect for one worker until `leaseMs` from now: a second delivery of the same job, or a
 * job re-run while the first run is still going, finds it taken and does nothing. A worker that dies
 * loses the claim when the lease ends, and the sweeper queues the effect again.
 */
export async function claimSideEffect(db: Db, id: string, leaseMs: number): Promise<boolean> {
  const rows = await db('side_effects')
    .where({ id })
    // a job that arrives before the effect is due (an older job of a rescheduled effect) leaves it to the job for that time
    .andWhere('run_after', '<=', db.raw(`now() + interval '1 second'`))
    .andWhere((q) => q.where('status', 'pending').orWhere((r) => r.where('status', 'running').andWhere('claimed_until', '<', db.fn.now())))
    .update({ status: 'running', claimed_until: db.raw(`now() + ?::interval`, [`${leaseMs} milliseconds`]) })
    .returning('id');
  return rows.length > 0;
}

/** Gives a claim back (the run failed and the queue will retry it). */
export async function releaseSideEffect(db: Db, id: string): Promise<void> {
  await db('side_effects').where({ id, status: 'running' }).update({ status: 'pending', claimed_until: null });
}

/**
 * Marks an effect done and, in the same statement, makes the next pending effect under its ordering
 * key due now and queues it, instead of leaving it to its own retry timer (a webhook delivery waiting
 * on its predecessor looks again only every PREDECESSOR_WAIT_MS).
 */
export async function markSideEffectDone(db: Db, queue: JobQueue, id: string): Promise<void> {
  const now = new Date();
  const { rows } = await db.raw(
    `WITH done AS (
       UPDATE side_effects SET status = 'done', claimed_until = NULL, done_at = :now WHERE id = :id RETURNING ordering_key, seq
     ),
     next AS (
       SELECT n.id FROM side_effects n JOIN done ON n.ordering_key = done.ordering_key AND n.seq > done.seq
       WHERE n.status = 'pending' ORDER BY n.seq LIMIT 1
     )
     UPDATE side_effects s SET run_after = :now FROM next WHERE s.id = next.id RETURNING s.id, s.kind, s.payload`,
    { id, now },
  );
  if (rows.length) await enqueueSideEffects(queue, [{ id: rows[0].id, kind: rows[0].kind, payload: rows[0].payload, runAfter: now }]);
}

/** Our own retry schedule: the effect stays pending, due later, and a job for that time is queued. */
export async function rescheduleSideEffect(db: Db, queue: JobQueue, id: string, runAfter: Date): Promise<void> {
  const [row] = await db('side_effects').where({ id }).update({ run_after: runAfter, status: 'pending', claimed_until: null }).returning(['id', 'kind', 'payload']);
  if (row) await enqueueSideEffects(queue, [{ id: row.id, kind: row.kind, payload: row.payload, runAfter }]);
}

/**
 * Finds side effects still pending well after they were due (a crash between commit and enqueue, or a
 * job lost with its queue), or claimed by a worker whose lease ran out, and enqueues them again.
 */
export function startSideEffectSweeper(deps: { db: Db; queue: JobQueue; intervalMs?: number; graceMs?: number; onError?: (err: unknown) => void }) {
  const graceMs = deps.graceMs ?? 60_000;
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
      await enqueueSideEffects(
        deps.queue,
        rows.map((r) => ({ id: r.id, kind: r.kind, payload: r.payload, runAfter: new Date(r.status === 'running' ? r.claimed_until : r.run_after) })),
      );
    } catch (err) {
      deps.onError?.(err);
    }
  }, deps.intervalMs ?? 30_000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/**
 * SQL for "an effect decided earlier under the same ordering key is still pending", for the effect
 * whose id is bound to `:effectId`: a condition to select alongside what the effect needs anyway.
 */
export const PENDING_PREDECESSOR_SQL = `EXISTS (
  SELECT 1 FROM side_effects s JOIN side_effects p ON p.ordering_key = s.ordering_key AND p.seq < s.seq
  WHERE s.id = :effectId AND p.status IN ('pending', 'running'))`;
