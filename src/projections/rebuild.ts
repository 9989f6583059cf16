import type { Db } from '../adapters/db/knex.js';
import { AppError } from '../domain/errors.js';
import { START, type EventStore, type Position } from '../ports/event-store.js';
import { generationTables, type Projection } from './projection.js';
import { applyBatch, dropGeneration, ensureProjection, pointViews } from './generations.js';

export interface RebuildResult {
  generation: number;
  events: number;
  seconds: number;
}

/**
 * The secondary indexes of a generation's tables: not primary keys or unique constraints, which the
 * handlers' ON CONFLICT clauses and lookups need while the tables fill.
 */
async function secondaryIndexes(db: Db, tables: string[]): Promise<{ name: string; definition: string }[]> {
  const { rows } = await db.raw(
    `SELECT i.indexname AS name, i.indexdef AS definition
       FROM pg_indexes i
      WHERE i.schemaname = current_schema() AND i.tablename = ANY(?::text[])
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = (quote_ident(i.schemaname) || '.' || quote_ident(i.indexname))::regclass)`,
    [tables],
  );
  return rows;
}

/** pg_indexes' `CREATE [UNIQUE] INDEX name ON ...` as its CONCURRENTLY form. */
const concurrently = (definition: string) => definition.replace(/^CREATE (UNIQUE )?INDEX /, 'CREATE $1INDEX CONCURRENTLY ');

async function countEvents(db: Db, projection: Projection): Promise<number> {
  const { streamPrefixes: prefixes, eventTypes: types } = projection;
  const query = db('events');
  if (prefixes?.length) query.whereRaw('stream_id LIKE ANY (?::text[])', [prefixes.map((p) => p.replace(/[\\%_]/g, (c) => `\\${c}`) + '%')]);
  if (types?.length) query.whereRaw('type = ANY (?::text[])', [types]);
  return Number((await query.count('* as n').first())?.n ?? 0);
}

/**
 * Builds the next generation of a read model from position zero beside the live one, then switches
 * the views to it in one transaction and drops the old generation. Readers see the old, complete read
 * model until the switch and the new, complete one after it: never an empty or half-built table.
 * `total` in onProgress is an estimate (events of the projection's streams when the rebuild started).
 */
export async function rebuildProjection(options: {
  db: Db;
  eventStore: EventStore;
  projection: Projection;
  batchSize?: number;
  onProgress?(done: number, total: number): void;
  /**
   * Nothing to do when the live generation already has the projection's version: a version change
   * that another process rebuilt between this one's look at the registry and the rebuild lock.
   */
  skipIfVersionLive?: boolean;
}): Promise<RebuildResult> {
  const { db, eventStore, projection } = options;
  const batchSize = options.batchSize ?? 5000;
  const started = Date.now();
  await ensureProjection(db, projection);

  const lock = await db.client.acquireConnection();
  try {
    const { rows } = await lock.query('SELECT pg_try_advisory_lock(hashtext($1)) AS owned', [`projection-rebuild:${projection.name}`]);
    if (!rows[0].owned) throw new AppError(409, `a rebuild of ${projection.name} is already running`);
    if (options.skipIfVersionLive) {
      const live = await db('projection_registry').where({ name: projection.name }).first();
      if (live.version === projection.version) return { generation: live.active_generation, events: 0, seconds: (Date.now() - started) / 1000 };
    }

    const max = await db('projection_checkpoints').where({ name: projection.name }).max('generation as g').first();
    const generation = Number(max?.g ?? 0) + 1;
    // A previous rebuild that died part-way leaves a building generation: start this one clean.
    const leftovers = await db('projection_checkpoints').where({ name: projection.name, status: 'building' }).select('generation');
    for (const { generation: g } of leftovers) await dropGeneration(db, projection, g);
    await db.transaction(async (trx) => {
      await projection.setup(trx, generationTables(generation));
      await trx('projection_checkpoints').insert({ name: projection.name, generation, version: projection.version, status: 'building' });
    });

    // Bulk-load without the secondary indexes and build them once at the end: a sorted index build is
    // several times cheaper than maintaining a trigram GIN and four B-trees row by row through millions
    // of events. Nobody reads the building generation, so nothing misses them meanwhile.
    const deferred = await secondaryIndexes(db, projection.tables.map(generationTables(generation)));
    for (const index of deferred) await db.raw('DROP INDEX ??', [index.name]);

    const total = await countEvents(db, projection);
    let done = 0;
    let position: Position = START;
    options.onProgress?.(0, total);
    // Catch up in committed batches while the live generation keeps serving.
    const read = (after: Position) => {
      const next = eventStore.readAll({ after, limit: batchSize, streamPrefixes: projection.streamPrefixes, eventTypes: projection.eventTypes });
      next.catch(() => {}); // awaited below; a failure while a batch is being applied must not go unhandled
      return next;
    };
    async function catchUp() {
      let next = read(position);
      for (;;) {
        const batch = await next;
        if (batch.length === 0) break;
        // Read the next batch while this one is written: a rebuild is bound by both, one after the other.
        if (batch.length === batchSize) next = read(batch[batch.length - 1].position);
        await db.transaction((trx) => applyBatch(trx, projection, generation, batch, { requireActive: false }));
        position = batch[batch.length - 1].position;
        done += batch.length;
        options.onProgress?.(done, Math.max(total, done));
        if (batch.length < batchSize) break;
      }
    }
    await catchUp();

    // CONCURRENTLY, one index at a time outside any transaction block: a plain CREATE INDEX holds a
    // transaction id for the whole build, and the event store's readers take no event committed after
    // the oldest running transaction id (postgres-event-store.ts), so every projection and process
    // manager of the service (sends, webhooks) stood still until the indexes of a large read model were
    // built. Nobody writes the building tables, so nothing else changes.
    await lock.query(`SET maintenance_work_mem = '256MB'`);
    try {
      for (const index of deferred) await lock.query(concurrently(index.definition));
    } finally {
      await lock.query('RESET maintenance_work_mem').catch(() => {});
    }
    // What was appended during the index builds, so that the switch below, which pauses the live
    // generation and holds a transaction id, has only the last few events to apply.
    await catchUp();

    // Switch: hold the registry row so live batches pause, apply the last events, repoint the views.
    let previous = 0;
    await db.transaction(async (trx) => {
      const reg = await trx('projection_registry').where({ name: projection.name }).forUpdate().first();
      previous = reg.active_generation;
      for (;;) {
        const batch = await eventStore.readAll({ after: position, limit: batchSize, streamPrefixes: projection.streamPrefixes, eventTypes: projection.eventTypes });
        if (batch.length === 0) break;
        await applyBatch(trx, projection, generation, batch, { requireActive: false });
        position = batch[batch.length - 1].position;
        done += batch.length;
      }
      await pointViews(trx, projection, generation);
      await trx('projection_checkpoints').where({ name: projection.name, generation: previous }).update({ status: 'retired' });
      await trx('projection_checkpoints').where({ name: projection.name, generation }).update({ status: 'active' });
      await trx('projection_registry')
        .where({ name: projection.name })
        .update({ active_generation: generation, version: projection.version, updated_at: new Date() });
    });
    options.onProgress?.(done, done);
    if (previous !== generation) await dropGeneration(db, projection, previous);
    return { generation, events: done, seconds: (Date.now() - started) / 1000 };
  } finally {
    await lock.query('SELECT pg_advisory_unlock(hashtext($1))', [`projection-rebuild:${projection.name}`]).catch(() => {});
    await db.client.releaseConnection(lock);
  }
}
