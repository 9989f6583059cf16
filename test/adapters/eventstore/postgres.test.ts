import { expect } from 'chai';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { createPostgresEventStore } from '../../../src/adapters/eventstore/postgres-event-store.js';
import { WrongExpectedRevisionError, type EventStore, type RecordedEvent } from '../../../src/ports/event-store.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { eventStoreContract } from './contract.js';

eventStoreContract('PostgreSQL', async () => {
  const db = await createTestDatabase();
  const store = createPostgresEventStore({ connectionString: db.url, pollIntervalMs: 50 });
  return {
    store,
    async cleanup() {
      await store.close();
      await db.drop();
    },
  };
});

describe('PostgreSQL event store', function () {
  let db: TestDatabase;
  let store: EventStore;
  before(async () => {
    db = await createTestDatabase();
    store = createPostgresEventStore({ connectionString: db.url, pollIntervalMs: 50 });
  });
  after(async () => {
    await store.close();
    await db.drop();
  });

  it('refuses UPDATE, DELETE and TRUNCATE on events in the database itself', async () => {
    await store.append('guard-1', [{ id: randomUUID(), type: 'T', data: {} }]);
    for (const sql of ["UPDATE events SET type = 'X'", 'DELETE FROM events', 'TRUNCATE events']) {
      const err = await db.db.raw(sql).catch((e) => e);
      expect(err, sql).to.be.instanceOf(Error);
      expect(String(err.message)).to.match(/append-only/);
    }
    expect(await store.readStream('guard-1')).to.have.length(1);
  });

  it('never skips an event whose transaction took a lower position but committed later', async () => {
    const prefix = `late-${randomUUID()}`;
    const seen: RecordedEvent[] = [];
    const sub = store.subscribe({ streamPrefixes: [prefix], onEvents: async (events) => void seen.push(...events) });
    const slow = new pg.Client({ connectionString: db.url });
    await slow.connect();
    const append = (client: pg.Client | pg.Pool, stream: string, type: string) =>
      client.query(`SELECT * FROM append_events($1, 'any', $2::uuid[], $3::text[], $4::int[], $5::jsonb[], $6::jsonb[])`, [
        stream,
        [randomUUID()],
        [type],
        [1],
        ['{}'],
        ['{}'],
      ]);
    try {
      await slow.query('BEGIN');
      await append(slow, `${prefix}-1`, 'Low'); // takes the lower global position, stays uncommitted
      await store.append(`${prefix}-2`, [{ id: randomUUID(), type: 'High', data: {} }]); // higher position, committed
      await new Promise((r) => setTimeout(r, 400));
      // A reader must not have passed the uncommitted lower position.
      expect(seen.map((e) => e.type)).to.deep.equal([]);
      await slow.query('COMMIT');
      const end = Date.now() + 5000;
      while (seen.length < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      expect(seen.map((e) => e.type)).to.deep.equal(['Low', 'High']);
      expect(Number(seen[0].position.prepare)).to.be.lessThan(Number(seen[1].position.prepare));
      await new Promise((r) => setTimeout(r, 200));
      expect(seen).to.have.length(2);
    } finally {
      await sub.close();
      await slow.end();
    }
  });

  it('8 concurrent writers × 500 appends to overlapping streams: nothing lost or doubled, conflicts typed, revisions gapless', async function () {
    this.timeout(120_000);
    const prefix = `race-${randomUUID()}`;
    const streams = [0, 1, 2, 3].map((i) => `${prefix}-${i}`);
    let conflicts = 0;
    const writer = async (w: number) => {
      // Each writer's belief of every stream's revision, corrected from the typed error on a conflict.
      const known = new Map<string, number | 'no_stream'>(streams.map((s) => [s, 'no_stream']));
      for (let i = 0; i < 500; i++) {
        const stream = streams[(w + i) % streams.length];
        const id = randomUUID();
        for (;;) {
          try {
            const r = await store.append(stream, [{ id, type: 'Counted', data: { w, i } }], { expectedRevision: known.get(stream)! });
            known.set(stream, r.nextRevision);
            break;
          } catch (err) {
            expect(err).to.be.instanceOf(WrongExpectedRevisionError);
            known.set(stream, (err as WrongExpectedRevisionError).actual);
            conflicts++;
          }
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, w) => writer(w)));
    const all = await store.readAll({ streamPrefixes: [prefix], limit: 10_000 });
    expect(all).to.have.length(4000);
    expect(new Set(all.map((e) => `${e.data.w}:${e.data.i}`)).size).to.equal(4000);
    for (const stream of streams) {
      const revisions = (await store.readStream(stream)).map((e) => e.revision);
      expect(revisions).to.deep.equal(revisions.map((_, i) => i));
    }
    expect(conflicts).to.be.greaterThan(0);
  });
});
