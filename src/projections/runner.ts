import pg from 'pg';
import type { Logger } from 'pino';
import type { Db } from '../adapters/db/knex.js';
import type { EventStore } from '../ports/event-store.js';
import type { Projection } from './projection.js';
import { applyBatch, ensureProjection, toCheckpoint } from './generations.js';
import { rebuildProjection } from './rebuild.js';

const OWNER_RETRY_MS = 1000;

class GenerationChanged extends Error {}

/**
 * Keeps read models up to date. Every process may run one; per projection a session advisory lock
 * picks one owner, and the others take over when it dies (its connection, and so its lock, goes away).
 * The owner follows the event log and applies each batch with its checkpoint in one transaction.
 * A projection whose code version differs from the live generation's is rebuilt beside it first.
 */
export function createProjectionRunner(deps: {
  db: Db;
  eventStore: EventStore;
  projections: Projection[];
  /** the database holding the read models; defaults to knex's connection */
  connectionString?: string;
  batchSize?: number;
  logger?: Logger;
}) {
  // knex keeps its connection either as the string it was given or as parsed options; pg takes both.
  const configured = deps.connectionString ?? deps.db.client.config.connection;
  const clientConfig: pg.ClientConfig = typeof configured === 'string' ? { connectionString: configured } : configured;
  const batchSize = deps.batchSize ?? 500;
  let stopped = false;
  let lockClient: pg.Client | undefined;
  const loops: Promise<void>[] = [];
  const closers = new Set<() => Promise<void>>();

  // One client holds every lock of this runner; its queries are serialised (pg forbids overlapping ones).
  let lockQueue: Promise<unknown> = Promise.resolve();
  function owns(name: string): Promise<boolean> {
    const run = lockQueue.then(() => tryLock(name));
    lockQueue = run.catch(() => {});
    return run;
  }

  async function tryLock(name: string): Promise<boolean> {
    if (!lockClient) {
      const client = new pg.Client(clientConfig);
      client.on('error', () => {
        // Our locks died with the connection: stop following, the loops re-acquire on a new one.
        if (lockClient === client) lockClient = undefined;
        closers.forEach((close) => void close());
      });
      await client.connect();
      lockClient = client;
    }
    const { rows } = await lockClient.query('SELECT pg_try_advisory_lock(hashtext($1)) AS owned', [`projection:${name}`]);
    return rows[0].owned;
  }

  async function follow(projection: Projection): Promise<void> {
    const reg = await deps.db('projection_registry').where({ name: projection.name }).first();
    if (reg.version !== projection.version) {
      deps.logger?.info({ projection: projection.name, from: reg.version, to: projection.version }, 'projection version changed: rebuilding');
      await rebuildProjection({ db: deps.db, eventStore: deps.eventStore, projection });
      return;
    }
    const generation: number = reg.active_generation;
    const cp = toCheckpoint(await deps.db('projection_checkpoints').where({ name: projection.name, generation }).first());
    await new Promise<void>((resolve, reject) => {
      const sub = deps.eventStore.subscribe({
        after: cp.position,
        limit: batchSize,
        streamPrefixes: projection.streamPrefixes,
        eventTypes: projection.eventTypes,
        onEvents: async (events) => {
          const applied = await deps.db.transaction((trx) => applyBatch(trx, projection, generation, events, { requireActive: true }));
          if (!applied) throw new GenerationChanged();
        },
        onError: (err) => {
          closers.delete(close);
          if (err instanceof GenerationChanged) resolve();
          else reject(err);
        },
      });
      const close = async () => {
        closers.delete(close);
        await sub.close();
        resolve();
      };
      closers.add(close);
      // stop() may have run while this loop was between taking ownership and subscribing
      if (stopped) void close();
    });
  }

  async function run(projection: Projection): Promise<void> {
    while (!stopped) {
      try {
        await ensureProjection(deps.db, projection);
        if (await owns(projection.name)) {
          await follow(projection);
          continue;
        }
      } catch (err) {
        deps.logger?.error({ err, projection: projection.name }, 'projection batch failed; retrying');
      }
      if (!stopped) await new Promise((r) => setTimeout(r, OWNER_RETRY_MS));
    }
  }

  return {
    async start() {
      // Create missing read models before serving, so the API never reads a view that does not exist yet.
      for (const p of deps.projections) await ensureProjection(deps.db, p);
      for (const p of deps.projections) loops.push(run(p));
    },
    async stop() {
      stopped = true;
      await Promise.all([...closers].map((close) => close()));
      await Promise.all(loops);
      await lockClient?.end().catch(() => {});
      lockClient = undefined;
    },
  };
}
export type ProjectionRunner = ReturnType<typeof createProjectionRunner>;
