import type { Knex } from 'knex';
import type { Db } from '../adapters/db/knex.js';
import { checkpointPosition } from '../adapters/db/checkpoint-position.js';
import { comparePositions, type Position, type RecordedEvent } from '../ports/event-store.js';
import { generationTables, type Projection } from './projection.js';

/** Bookkeeping shared by the live runner and the rebuild: generations, checkpoints, views. */

export interface CheckpointRow {
  generation: number;
  version: number;
  status: 'active' | 'building' | 'retired';
  position: Position;
  events: number;
}

export function toCheckpoint(row: Record<string, any>): CheckpointRow {
  return {
    generation: row.generation,
    version: row.version,
    status: row.status,
    position: checkpointPosition(row),
    events: Number(row.events),
  };
}

const quote = (identifier: string) => `"${identifier.replace(/"/g, '""')}"`;

/** Points every view of the projection at one generation's tables (in the caller's transaction). */
export async function pointViews(trx: Knex.Transaction, projection: Projection, generation: number): Promise<void> {
  const t = generationTables(generation);
  for (const base of projection.tables) {
    await trx.raw(`DROP VIEW IF EXISTS ${quote(base)}`);
    await trx.raw(`CREATE VIEW ${quote(base)} AS SELECT * FROM ${quote(t(base))}`);
  }
}

export async function dropGeneration(db: Db, projection: Projection, generation: number): Promise<void> {
  const t = generationTables(generation);
  for (const base of projection.tables) await db.raw(`DROP TABLE IF EXISTS ${quote(t(base))} CASCADE`);
  await db('projection_checkpoints').where({ name: projection.name, generation }).delete();
}

/**
 * Creates generation 1 the first time a projection is seen; safe when several processes start at once
 * (a transaction-scoped advisory lock serialises them, the second finds the registry row).
 */
export async function ensureProjection(db: Db, projection: Projection): Promise<void> {
  await db.transaction(async (trx) => {
    await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', [`projection-init:${projection.name}`]);
    const existing = await trx('projection_registry').where({ name: projection.name }).first();
    if (existing) return;
    await projection.setup(trx, generationTables(1));
    await pointViews(trx, projection, 1);
    await trx('projection_checkpoints').insert({ name: projection.name, generation: 1, version: projection.version, status: 'active' });
    await trx('projection_registry').insert({ name: projection.name, active_generation: 1, version: projection.version });
  });
}

/**
 * Applies one batch to one generation and advances its checkpoint in the caller's transaction: the
 * read model and the checkpoint move together or not at all. Returns false (writing nothing) when
 * `requireActive` and the generation is no longer the active one.
 */
export async function applyBatch(
  trx: Knex.Transaction,
  projection: Projection,
  generation: number,
  events: RecordedEvent[],
  options: { requireActive: boolean },
): Promise<boolean> {
  // One statement for the batch's bookkeeping: the registry row FOR SHARE when the generation must be
  // the live one (a rebuild's switch takes it FOR UPDATE, so it waits for this batch and later batches
  // wait for the switch; an inactive generation finds no row), and the checkpoint under its row lock.
  // That checkpoint is the truth, not the position the caller read from: after an ownership takeover
  // (a lock connection that died quietly) a batch can arrive that another runner has applied meanwhile,
  // and counters such as opens must not count it twice.
  // Handlers only look rows up by key, and a read model that grows fast has stale statistics: the
  // planner seq-scanned 12,000 messages and hash-joined them to update 32 by id. Priced out, not
  // forbidden, for this transaction only; JIT off with it, since a plan priced out that way still costs
  // far above jit_above_cost and would compile itself for every statement.
  // The commit does not wait for the WAL flush (synchronous_commit off, this transaction only): a batch
  // lost with the last fraction of a second of WAL when PostgreSQL itself stops loses its checkpoint
  // with it, and the runner applies the same events again from the durable log. During a campaign,
  // a dozen read models' commits queued for the flush behind the event appends that must wait for it.
  const { rows } = await trx.raw(
    options.requireActive
      ? `SELECT c.*, set_config('enable_seqscan', 'off', true), set_config('jit', 'off', true), set_config('synchronous_commit', 'off', true) FROM projection_registry r
         JOIN projection_checkpoints c ON c.name = r.name AND c.generation = r.active_generation
         WHERE r.name = ? AND r.active_generation = ? FOR SHARE OF r FOR UPDATE OF c`
      : `SELECT c.*, set_config('enable_seqscan', 'off', true), set_config('jit', 'off', true), set_config('synchronous_commit', 'off', true) FROM projection_checkpoints c
         WHERE c.name = ? AND c.generation = ? FOR UPDATE`,
    [projection.name, generation],
  );
  if (rows.length === 0) {
    if (options.requireActive) return false;
    throw new Error(`projection ${projection.name} has no checkpoint for generation ${generation}`);
  }
  const checkpoint = toCheckpoint(rows[0]);
  const fresh = events.filter((e) => comparePositions(e.position, checkpoint.position) > 0);
  if (fresh.length === 0) return true;
  await projection.handle(fresh, trx, generationTables(generation));
  const last = fresh[fresh.length - 1].position;
  await trx('projection_checkpoints')
    .where({ name: projection.name, generation })
    .update({
      commit_pos: last.commit.toString(),
      prepare_pos: last.prepare.toString(),
      events: trx.raw('events + ?', [fresh.length]),
      updated_at: new Date(),
    });
  return true;
}
