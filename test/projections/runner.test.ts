import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { createPostgresEventStore } from '../../src/adapters/eventstore/postgres-event-store.js';
import type { EventStore } from '../../src/ports/event-store.js';
import type { Projection } from '../../src/projections/projection.js';
import { rebuildProjection } from '../../src/projections/rebuild.js';
import { createProjectionRunner } from '../../src/projections/runner.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { createDb } from '../../src/adapters/db/knex.js';
import { eventually } from '../support/email-setup.js';

/**
 * A test read model: one row per stream with the count of its events. `seen` has the event id as its
 * key, so an event applied twice fails the batch instead of passing unnoticed.
 */
function tallyProjection(options: { version?: number; failOn?: string; slowIndex?: boolean } = {}): Projection {
  return {
    name: 'tally',
    version: options.version ?? 1,
    tables: ['tally', 'tally_seen'],
    streamPrefixes: ['tally-'],
    async setup(trx, t) {
      await trx.schema.createTable(t('tally'), (table) => {
        table.text('stream_id').primary();
        table.integer('events').notNullable();
      });
      await trx.schema.createTable(t('tally_seen'), (table) => table.uuid('event_id').primary());
      // an index whose build waits for the test to let it finish (slow_key, created by the test that asks for it)
      if (options.slowIndex) await trx.raw(`CREATE INDEX ${t('tally')}_slow ON ${t('tally')} (slow_key(stream_id))`);
    },
    async handle(events, trx, t) {
      for (const e of events) {
        if (options.failOn && e.type === options.failOn) throw new Error(`refusing ${e.type}`);
        await trx(t('tally_seen')).insert({ event_id: e.id });
        await trx(t('tally'))
          .insert({ stream_id: e.streamId, events: 1 })
          .onConflict('stream_id')
          .merge({ events: trx.raw('?? + 1', [`${t('tally')}.events`]) });
      }
    },
  };
}

async function appendMany(store: EventStore, streams: number, perStream: number, type = 'Counted'): Promise<void> {
  await Promise.all(
    Array.from({ length: streams }, async (_, s) => {
      for (let i = 0; i < perStream; i += 50) {
        const n = Math.min(50, perStream - i);
        await store.append(`tally-${s}`, Array.from({ length: n }, () => ({ id: randomUUID(), type, data: {} })));
      }
    }),
  );
}

const total = async (t: TestDatabase) => Number((await t.db('tally').sum('events as n').first())?.n ?? 0);

describe('projection runner', function () {
  this.timeout(60_000);
  let t: TestDatabase;
  let store: EventStore;
  beforeEach(async () => {
    t = await createTestDatabase();
    store = createPostgresEventStore({ connectionString: t.url, pollIntervalMs: 50 });
  });
  afterEach(async () => {
    await store.close();
    await t.drop();
  });

  it('stops promptly when stopped while still starting up (between taking ownership and subscribing)', async () => {
    for (const delayMs of [0, 1, 5, 20]) {
      const runner = createProjectionRunner({ db: t.db, eventStore: store, projections: [tallyProjection()] });
      await runner.start();
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      const stopped = await Promise.race([runner.stop().then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 5000))]);
      expect(stopped, `stop() ${delayMs} ms after start()`).to.equal(true);
    }
  });

  it('applies every event once and moves the checkpoint with the rows', async () => {
    const runner = createProjectionRunner({ db: t.db, eventStore: store, projections: [tallyProjection()], batchSize: 100 });
    await runner.start();
    try {
      await appendMany(store, 10, 120);
      await eventually(() => total(t), (n) => n === 1200);
      const cp = await t.db('projection_checkpoints').where({ name: 'tally', status: 'active' }).first();
      expect(Number(cp.events)).to.equal(1200);
      expect(Number((await t.db('tally').count('* as n').first())?.n)).to.equal(10);
    } finally {
      await runner.stop();
    }
  });

  it('writes nothing of a batch that fails, and keeps retrying from the same checkpoint', async () => {
    const failing = createProjectionRunner({ db: t.db, eventStore: store, projections: [tallyProjection({ failOn: 'Poison' })], batchSize: 1000 });
    await appendMany(store, 1, 10);
    await store.append('tally-0', [{ id: randomUUID(), type: 'Poison', data: {} }]);
    await failing.start();
    await new Promise((r) => setTimeout(r, 600));
    await failing.stop();
    // the batch held the 10 good events and the poison one: none of it, nor the checkpoint, was kept
    expect(await total(t)).to.equal(0);
    const cp = await t.db('projection_checkpoints').where({ name: 'tally' }).first();
    expect(Number(cp.events)).to.equal(0);

    const fixed = createProjectionRunner({ db: t.db, eventStore: store, projections: [tallyProjection()], batchSize: 1000 });
    await fixed.start();
    try {
      await eventually(() => total(t), (n) => n === 11);
    } finally {
      await fixed.stop();
    }
  });

  it('has one owner per projection across runners; another takes over when it stops', async () => {
    const a = createProjectionRunner({ db: t.db, eventStore: store, projections: [tallyProjection()], batchSize: 50 });
    const b = createProjectionRunner({ db: t.db, eventStore: store, projections: [tallyProjection()], batchSize: 50 });
    await Promise.all([a.start(), b.start()]);
    let bStopped = false;
    try {
      await appendMany(store, 8, 100);
      // a double application would fail on tally_seen's key and stall the count below 800
      await eventually(() => total(t), (n) => n === 800);
      await a.stop();
      await appendMany(store, 8, 25);
      await eventually(() => total(t), (n) => n === 1000, 15_000);
      await b.stop();
      bStopped = true;
      expect(Number((await t.db('tally_seen').count('* as n').first())?.n)).to.equal(1000);
    } finally {
      await a.stop();
      if (!bStopped) await b.stop();
    }
  });

  it('rebuilds a new version beside the live one when the code version changes', async () => {
    await applyWith(1, 3, 10, 30);

    const v2 = createProjectionRunner({ db: t.db, eventStore: store, projections: [tallyProjection({ version: 2 })] });
    await v2.start();
    try {
      await eventually(() => t.db('projection_registry').where({ name: 'tally' }).first(), (r) => r.version === 2);
      expect(await total(t)).to.equal(30);
      await appendMany(store, 1, 5);
      await eventually(() => total(t), (n) => n === 35);
      const generations = await t.db('projection_checkpoints').where({ name: 'tally' }).select('generation', 'status');
      expect(generations).to.deep.equal([{ generation: 2, status: 'active' }]);
    } finally {
      await v2.stop();
    }
  });

  /** A runner of code `version` applies `streams` × `perStream` new events (the read model's total is then `expected`), and stops. */
  async function applyWith(version: number, streams: number, perStream: number, expected: number) {
    const runner = createProjectionRunner({ db: t.db, eventStore: store, projections: [tallyProjection({ version })] });
    await runner.start();
    try {
      await appendMany(store, streams, perStream);
      await eventually(() => total(t), (n) => n === expected);
    } finally {
      await runner.stop();
    }
  }

  it('an older process neither follows nor rebuilds back a read model a newer version rebuilt', async () => {
    await applyWith(2, 3, 10, 30);

    // a process of the previous release, still running during a rolling upgrade
    const v1 = createProjectionRunner({ db: t.db, eventStore: store, projections: [tallyProjection({ version: 1 })] });
    await v1.start();
    try {
      await appendMany(store, 1, 5);
      await new Promise((r) => setTimeout(r, 2500)); // two of its ownership retries
      expect(await t.db('projection_registry').where({ name: 'tally' }).first()).to.include({ version: 2, active_generation: 1 });
      expect(await total(t)).to.equal(30);
    } finally {
      await v1.stop();
    }
    await applyWith(2, 0, 0, 35); // the newer release takes up the 5 events
  });

  it('while a newer version rebuilds, an older process keeps the live read model current until the switch', async () => {
    await applyWith(1, 3, 10, 30);

    // The new release's rebuild is held at its first read of the log until the gate opens.
    let entered!: () => void;
    const rebuilding = new Promise<void>((r) => (entered = r));
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const gated: EventStore = { ...store, readAll: async (options) => (entered(), await gate, store.readAll(options)) };
    const newer = createProjectionRunner({ db: t.db, eventStore: gated, projections: [tallyProjection({ version: 2 })] });
    const older = createProjectionRunner({ db: t.db, eventStore: store, projections: [tallyProjection({ version: 1 })] });
    await newer.start();
    try {
      await rebuilding;
      await older.start();
      await appendMany(store, 1, 5);
      await eventually(() => total(t), (n) => n === 35, 10_000); // applied to the live generation by the older process

      open();
      await eventually(() => t.db('projection_registry').where({ name: 'tally' }).first(), (r) => r.version === 2 && r.active_generation === 2);
      expect(await total(t)).to.equal(35);
      await appendMany(store, 1, 5);
      await eventually(() => total(t), (n) => n === 40, 10_000); // the newer process follows its generation
      expect(await t.db('projection_registry').where({ name: 'tally' }).first()).to.include({ version: 2, active_generation: 2 });
    } finally {
      open();
      await older.stop();
      await newer.stop();
    }
  });

  it('a newer process started beside an older one that follows the live read model rebuilds it all the same (a rolling upgrade)', async () => {
    await applyWith(1, 3, 10, 30);
    const older = createProjectionRunner({ db: t.db, eventStore: store, projections: [tallyProjection({ version: 1 })] });
    await older.start();
    await appendMany(store, 1, 5);
    await eventually(() => total(t), (n) => n === 35, 10_000); // the older one owns and follows it
    const newer = createProjectionRunner({ db: t.db, eventStore: store, projections: [tallyProjection({ version: 2 })] });
    await newer.start();
    try {
      await eventually(() => t.db('projection_registry').where({ name: 'tally' }).first(), (r) => r.version === 2, 15_000);
      await appendMany(store, 1, 5);
      await eventually(() => total(t), (n) => n === 40, 10_000);
    } finally {
      await older.stop();
      await newer.stop();
    }
  });

  it('rebuilds one read model at a time: many version changes at once do not hold the whole connection pool', async () => {
    const names = Array.from({ length: 8 }, (_, i) => `tally${i}`);
    const many = (version: number) => names.map((name) => ({ ...tallyProjection({ version }), name, tables: [`${name}`, `${name}_seen`], setup: async (trx: any, tt: (b: string) => string) => {
      await trx.schema.createTable(tt(name), (table: any) => { table.text('stream_id').primary(); table.integer('events').notNullable(); });
      await trx.schema.createTable(tt(`${name}_seen`), (table: any) => table.uuid('event_id').primary());
    }, handle: async () => {} }));
    await appendMany(store, 2, 10);
    const v1 = createProjectionRunner({ db: t.db, eventStore: store, projections: many(1) });
    await v1.start();
    await v1.stop();
    // a pool of two: with every rebuild at once, each held one connection and waited for another
    const small = createDb(t.url, { pool: 2 });
    const v2 = createProjectionRunner({ db: small, eventStore: store, projections: many(2), connectionString: t.url });
    await v2.start();
    try {
      await eventually(() => t.db('projection_registry').whereIn('name', names).where({ version: 2 }).count('* as n').first(), (r) => Number(r?.n) === names.length, 30_000);
    } finally {
      await v2.stop();
      await small.destroy();
    }
  });

  it('a rebuild for a version change does nothing when that version went live meanwhile', async () => {
    await applyWith(2, 2, 10, 20);
    const result = await rebuildProjection({ db: t.db, eventStore: store, projection: tallyProjection({ version: 2 }), skipIfVersionLive: true });
    expect(result).to.include({ generation: 1, events: 0 });
    expect(await t.db('projection_checkpoints').where({ name: 'tally' }).select('generation', 'status')).to.deep.equal([{ generation: 1, status: 'active' }]);
  });

  it('builds a new generation\'s indexes without holding back the event log\'s readers', async () => {
    // Declared immutable so that it can be indexed; it waits for a lock the test holds, so the index is
    // still being built for as long as the test needs, however slow the machine.
    await t.db.raw(`CREATE FUNCTION slow_key(text) RETURNS text LANGUAGE sql IMMUTABLE AS 'SELECT $1 FROM (SELECT pg_advisory_xact_lock_shared(4242)) s'`);
    const gate = await t.db.client.acquireConnection();
    await gate.query('SELECT pg_advisory_lock(4242)');
    let rebuild: Promise<unknown> | undefined;
    try {
      await appendMany(store, 100, 1);
      const building = () => t.db.raw(`SELECT 1 FROM pg_stat_activity WHERE query LIKE 'CREATE INDEX%tally%' AND state = 'active'`).then((r) => r.rows.length > 0);
      rebuild = rebuildProjection({ db: t.db, eventStore: store, projection: tallyProjection({ slowIndex: true }) });
      await eventually(building, (b) => b);
      const head = (await store.readAll({ limit: 1000 })).at(-1)!.position;
      await store.append('other-1', [{ id: randomUUID(), type: 'Happened', data: {} }]);
      await eventually(async () => (await store.readAll({ after: head, streamPrefixes: ['other-'] })).length, (n) => n === 1);
      expect(await building(), 'the event was read only once the index was built').to.equal(true);
    } finally {
      await gate.query('SELECT pg_advisory_unlock(4242)');
      await t.db.client.releaseConnection(gate);
      await rebuild;
    }
    expect(await t.db.raw(`SELECT indisvalid FROM pg_index WHERE indexrelid = 'tally_g2_slow'::regclass`).then((r) => r.rows[0].indisvalid)).to.equal(true);
  });

  it('rebuild while reads continue: readers never see an empty or partial read model', async () => {
    const runner = createProjectionRunner({ db: t.db, eventStore: store, projections: [tallyProjection()], batchSize: 1000 });
    await runner.start();
    await appendMany(store, 20, 100);
    await eventually(() => total(t), (n) => n === 2_000, 30_000);

    let reading = true;
    const seen: number[] = [];
    const readers = Array.from({ length: 4 }, async () => {
      while (reading) {
        const [sum, rows] = await Promise.all([total(t), t.db('tally').count('* as n').first()]);
        seen.push(sum, Number(rows?.n) * 100);
      }
    });
    const progress: Array<[number, number]> = [];
    try {
      const result = await rebuildProjection({ db: t.db, eventStore: store, projection: tallyProjection(), batchSize: 200, onProgress: (d, n) => progress.push([d, n]) });
      expect(result.events).to.equal(2_000);
      expect(result.generation).to.equal(2);
    } finally {
      reading = false;
      await Promise.all(readers);
    }
    expect(seen.length).to.be.greaterThan(20);
    expect(seen.every((n) => n === 2_000), `a read saw ${seen.find((n) => n !== 2_000)}`).to.equal(true);
    expect(progress[0]).to.deep.equal([0, 2_000]);
    expect(progress.length, 'rebuilt in several batches').to.be.greaterThan(5);
    expect(progress[progress.length - 1]).to.deep.equal([2_000, 2_000]);

    // the live runner goes on applying new events to the new generation
    try {
      await appendMany(store, 1, 7);
      await eventually(() => total(t), (n) => n === 2_007);
    } finally {
      await runner.stop();
    }
  });
});
