import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Db } from '../adapters/db/knex.js';
import { checkpointPosition } from '../adapters/db/checkpoint-position.js';
import { comparePositions, START, type EventStore, type Position, type RecordedEvent } from '../ports/event-store.js';
import type { JobQueue } from '../ports/job-queue.js';
import { enqueueSideEffects, recordSideEffects, type SideEffect } from '../adapters/db/side-effects.js';

export interface ProcessManager {
  name: string;
  streamPrefixes: string[];
  /** only events of these types reach `handle` (all types when absent) */
  eventTypes?: string[];
  /**
   * Runs before the batch's transaction, for waits that must not hold it open: the transaction locks
   * the checkpoint row, and the event store's readers take no event committed after the oldest
   * running transaction that did so (a wait in it held up every reader of the log, sends included).
   */
  prepare?(events: RecordedEvent[]): Promise<void>;
  /** Decides side effects for a batch; may also write its own state with `trx` (same transaction as the checkpoint). */
  handle(events: RecordedEvent[], trx: Knex.Transaction): Promise<SideEffect[]>;
}

const LOCK_NAMESPACE = 7_411;

/**
 * Runs process managers: one owner each across processes (a session advisory lock), batches applied
 * with their checkpoint in one transaction (events at or before it skipped), side effects enqueued
 * after commit (the sweeper covers a crash in between).
 */
export function createProcessManagerRunner(deps: {
  db: Db;
  eventStore: EventStore;
  queue: JobQueue;
  managers: ProcessManager[];
  logger?: Logger;
  batchSize?: number;
  retryDelayMs?: number;
}) {
  const stops: (() => Promise<void>)[] = [];
  const batchSize = deps.batchSize ?? 200;

  async function checkpointOf(name: string): Promise<Position> {
    await deps.db('process_manager_checkpoints').insert({ name, commit_pos: 0, prepare_pos: 0 }).onConflict('name').ignore();
    const row = await deps.db('process_manager_checkpoints').where({ name }).first();
    return checkpointPosition(row);
  }

  async function run(manager: ProcessManager, signal: { stopped: boolean }) {
    // A dedicated connection holds the ownership lock for as long as this process runs the manager.
    const conn = await deps.db.client.acquireConnection();
    try {
      while (!signal.stopped) {
        const { rows } = await conn.query('SELECT pg_try_advisory_lock($1, hashtext($2)) AS owned', [LOCK_NAMESPACE, manager.name]);
        if (rows[0].owned) break;
        await new Promise((r) => setTimeout(r, 1000));
      }
      if (signal.stopped) return;
      const after = await checkpointOf(manager.name);
      await new Promise<void>((resolve) => {
        const sub = deps.eventStore.subscribe({
          after: after ?? START,
          limit: batchSize,
          streamPrefixes: manager.streamPrefixes,
          eventTypes: manager.eventTypes,
          onEvents: async (events) => {
            let effects: SideEffect[] = [];
            await manager.prepare?.(events);
            await deps.db.transaction(async (trx) => {
              // The checkpoint under its row lock is the truth, not the position this subscription
              // read from: an owner whose lock connection died quietly keeps following the log while
              // another takes over, and a batch one of them applied must not reach the manager twice.
              const row = await trx('process_manager_checkpoints').where({ name: manager.name }).forUpdate().first('commit_pos', 'prepare_pos');
              const checkpoint = checkpointPosition(row);
              const fresh = events.filter((e) => comparePositions(e.position, checkpoint) > 0);
              if (fresh.length === 0) return;
              effects = await recordSideEffects(trx, await manager.handle(fresh, trx));
              const last = fresh[fresh.length - 1].position;
              await trx('process_manager_checkpoints')
                .where({ name: manager.name })
                .update({ commit_pos: last.commit.toString(), prepare_pos: last.prepare.toString(), updated_at: new Date() });
            });
            // The effects are recorded: a queue that failed them (its connection dropped) is asked again
            // in the background a few times, sooner than the sweeper would find them.
            if (effects.length > 0) void enqueueSoon(manager.name, effects);
          },
          onError: (err) => {
            deps.logger?.error({ err, manager: manager.name }, 'process manager batch failed; restarting');
            resolve();
          },
        });
        const close = async () => {
          await sub.close();
          resolve();
        };
        stops.push(close);
        // stop() may have run while this loop was reading its checkpoint: it did not see `close`
        if (signal.stopped) void close();
      });
    } finally {
      await conn.query('SELECT pg_advisory_unlock_all()').catch(() => {});
      await deps.db.client.releaseConnection(conn);
    }
  }

  async function enqueueSoon(name: string, effects: SideEffect[]) {
    for (const pauseMs of [0, 500, 2_000, 5_000]) {
      if (pauseMs) await new Promise((r) => setTimeout(r, pauseMs));
      try {
        return await enqueueSideEffects(deps.queue, effects);
      } catch (err) {
        if (pauseMs === 5_000) deps.logger?.warn({ err, manager: name }, 'enqueue failed; the sweeper will retry');
      }
    }
  }

  return {
    start() {
      for (const manager of deps.managers) {
        const signal = { stopped: false };
        const loop = (async () => {
          while (!signal.stopped) {
            await run(manager, signal).catch((err) => deps.logger?.warn({ err, manager: manager.name }, 'process manager failed; retrying in a second'));
            if (!signal.stopped) await new Promise((r) => setTimeout(r, deps.retryDelayMs ?? 1000));
          }
        })();
        stops.push(async () => {
          signal.stopped = true;
          await loop;
        });
      }
    },
    async stop() {
      await Promise.all(stops.splice(0).map((s) => s()));
    },
  };
}
