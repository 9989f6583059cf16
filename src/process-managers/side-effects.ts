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
    .insert(effects.map((e) => ({ id: e.id, kind: e.kind, payload: JSON.stringify(e.payload), run_after: e.runAfter })))
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

export async function markSideEffectDone(db: Db, id: string): Promise<void> {
  await db('side_effects').where({ id }).update({ status: 'done', done_at: new Date() });
}

/** Our own retry schedule: the effect stays pending, due later, and a job for that time is queued. */
export async function rescheduleSideEffect(db: Db, queue: JobQueue, id: string, runAfter: Date): Promise<void> {
  const [row] = await db('side_effects').where({ id }).update({ run_after: runAfter, status: 'pending' }).returning(['id', 'kind', 'payload']);
  if (row) await enqueueSideEffects(queue, [{ id: row.id, kind: row.kind, payload: row.payload, runAfter }]);
}

/**
 * Finds side effects still pending well after they were due (a crash between commit and enqueue, or a
 * job lost with its queue) and enqueues them again.
 */
export function startSideEffectSweeper(deps: { db: Db; queue: JobQueue; intervalMs?: number; graceMs?: number; onError?: (err: unknown) => void }) {
  const graceMs = deps.graceMs ?? 60_000;
  const timer = setInterval(async () => {
    try {
      const rows = await deps
        .db('side_effects')
        .where({ status: 'pending' })
        .andWhere('run_after', '<', new Date(Date.now() - graceMs))
        .orderBy('run_after')
        .limit(500);
      await enqueueSideEffects(
        deps.queue,
        rows.map((r) => ({ id: r.id, kind: r.kind, payload: r.payload, runAfter: new Date(r.run_after) })),
      );
    } catch (err) {
      deps.onError?.(err);
    }
  }, deps.intervalMs ?? 30_000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
