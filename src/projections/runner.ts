import pg from 'pg';
import type { Logger } from 'pino';
import type { Db } from '../adapters/db/knex.js';
import type { EventStore } from '../ports/event-store.js';
import type { Projection } from './projection.js';
import { applyBatch, ensureProjection, toCheckpoint } from './generations.js';
import { rebuildProjection } from './rebuild.js';
import { AppError } from '../domain/errors.js';

const OWNER_RETRY_MS = 1000;
const PROGRESS_LOG_MS = 10_000;

class GenerationChanged extends Error {}

/**
 * Keeps read models up to date. Every process may run one; per projection a session advisory lock
 * picks one owner, and the others take over when it dies (its connection, and so its lock, goes away).
 * The owner follows the event log and applies each batch with its checkpoint in one transaction.
 * A projection whose code version is newer than the live generation's is rebuilt beside it first; one
 * whose code is older than the live generation's is left alone.
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
  /** projections whose read model is a newer version than this code (warned about once) */
  const outranked = new Set<string>();

  // One client holds every lock of this runner; its queries are serialised (pg forbids overlapping ones).
  // Session advisory locks count: `held` keeps a lock taken once however often its loop comes back, so
  // that one unlock gives it up.
  const serialised = inTurn();
  const held = new Set<string>();

  const owns = (name: string) =>
    serialised(async () => {
      if (!lockClient) {
        const client = new pg.Client(clientConfig);
        client.on('error', () => {
          // Our locks died with the connection: stop following, the loops re-acquire on a new one.
          if (lockClient !== client) return;
          lockClient = undefined;
          held.clear();
          closers.forEach((close) => void close());
        });
        await client.connect();
        lockClient = client;
      }
      if (held.has(name)) return true;
      const { rows } = await lockClient.query('SELECT pg_try_advisory_lock(hashtext($1)) AS owned', [`projection:${name}`]);
      if (rows[0].owned) held.add(name);
      return rows[0].owned as boolean;
    });

  const release = (name: string) =>
    serialised(async () => {
      if (held.delete(name)) await lockClient?.query('SELECT pg_advisory_unlock(hashtext($1))', [`projection:${name}`]);
    });

  // One rebuild at a time per process: each holds a pooled connection for its whole length and takes
  // more for its batches, so six read models of a release rebuilding at once held the whole pool and
  // waited on it (a minute's acquire timeout, then each started over).
  const oneAtATime = inTurn();

  /**
   * A version change is settled before anyone follows, and without the live lock: in a rolling upgrade
   * the processes still running the code of the live generation hold it and keep that generation
   * current until the switch, while a newer process rebuilds beside it.
   * A number: the live generation, of this code's version, to follow; 'wait': nothing to do with it
   * for now; 'again': it was just rebuilt.
   */
  async function settleVersion(projection: Projection): Promise<number | 'wait' | 'again'> {
    const reg = await deps.db('projection_registry').where({ name: projection.name }).first();
    if (reg.version > projection.version) {
      // This process runs older code than the read model (a newer one has rebuilt it): its handler may
      // not fit the newer tables, and rebuilding back would undo the upgrade.
      if (!outranked.has(projection.name)) {
        outranked.add(projection.name);
        deps.logger?.warn({ projection: projection.name, live: reg.version, code: projection.version }, 'read model is a newer version than this code: left to the newer processes');
      }
      await release(projection.name);
      return 'wait';
    }
    outranked.delete(projection.name);
    if (reg.version < projection.version) {
      await release(projection.name);
      const log = { projection: projection.name, from: reg.version, to: projection.version };
      let lastLogged = 0;
      const result = await oneAtATime(() => rebuildProjection({
        db: deps.db,
        eventStore: deps.eventStore,
        projection,
        skipIfVersionLive: true,
        onProgress(done, total) {
          if (done > 0 && done < total && Date.now() - lastLogged < PROGRESS_LOG_MS) return;
          lastLogged = Date.now();
          deps.logger?.info({ ...log, done, total }, done === 0 ? 'projection version changed: rebuilding' : 'rebuilding projection');
        },
      }).catch((err: unknown) => {
        // another newer process is rebuilding it: follow its result once it is live
        if (err instanceof AppError && err.status === 409) return undefined;
        throw err;
      }));
      return result ? 'again' : 'wait';
    }
    return reg.active_generation as number;
  }

  /** Follows the live generation while this process owns the projection (until another goes live). */
  async function follow(projection: Projection, generation: number): Promise<void> {
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
        const live = await settleVersion(projection);
        if (live === 'again') continue;
        if (typeof live === 'number' && (await owns(projection.name))) {
          await follow(projection, live);
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
      held.clear();
    },
  };
}
export type ProjectionRunner = ReturnType<typeof createProjectionRunner>;

/** Runs the work given to it one after another, each once the one before has settled (whatever its outcome). */
function inTurn() {
  let last: Promise<unknown> = Promise.resolve();
  return <T>(work: () => Promise<T>): Promise<T> => {
    const run = last.then(work);
    last = run.catch(() => {});
    return run;
  };
}
