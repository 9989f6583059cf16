import { expect } from 'chai';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { createPostgresEventStore } from '../../../src/adapters/eventstore/postgres-event-store.js';
import { START, WrongExpectedRevisionError, type EventStore, type RecordedEvent } from '../../../src/ports/event-store.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { indexEntriesRead } from '../../support/index-reads.js';
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

// Every subscription through the shared tail (log-tail.ts), kept short so that readers fall behind it too.
eventStoreContract('PostgreSQL, subscriptions through the shared tail', async () => {
  const db = await createTestDatabase();
  const store = createPostgresEventStore({ connectionString: db.url, pollIntervalMs: 50, sharedTailFrom: 1, sharedTailCapacity: 3 });
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

  it('commits concurrent appends to different streams together (one transaction), a refused one aside', async () => {
    const p = `group-${randomUUID()}`;
    await store.append(`${p}-taken`, [{ id: randomUUID(), type: 'T', data: {} }]);
    const settled = await Promise.allSettled(
      ['a', 'b', 'taken', 'c'].map((s) => store.append(`${p}-${s}`, [{ id: randomUUID(), type: 'T', data: {} }], { expectedRevision: 'no_stream' })),
    );
    expect(settled.map((r) => r.status)).to.deep.equal(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    const commits = new Set(settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value.position.commit] : [])));
    expect(commits.size).to.equal(1);
    const all = await store.readAll({ streamPrefixes: [p] });
    expect(all.map((e) => e.streamId).sort()).to.deep.equal([`${p}-a`, `${p}-b`, `${p}-c`, `${p}-taken`]);
  });

  describe('data keys carried by appends (AppendOptions.keys)', () => {
    const key = (accountId: string) => ({ id: randomUUID(), accountId, person: 'p', scope: 'profile', wrapped: Buffer.from(randomUUID()) });
    const stored = async (keys: { id: string; wrapped: Buffer }[]) =>
      (await db.db('data_keys').whereIn('id', keys.map((k) => k.id)).select('id', 'wrapped')).map((r) => `${r.id}:${r.wrapped.toString()}`).sort();
    const named = (keys: { id: string; wrapped: Buffer }[]) => keys.map((k) => `${k.id}:${k.wrapped.toString()}`).sort();
    const e = () => [{ id: randomUUID(), type: 'T', data: {} }];

    it('stores the keys of the concurrent appends that are appended, in their statement, and none of a refused one', async () => {
      const p = `keyed-${randomUUID()}`;
      await store.append(`${p}-taken`, e());
      const keys = ['a', 'b', 'taken', 'c'].map(() => key(p));
      const settled = await Promise.allSettled(
        ['a', 'b', 'taken', 'c'].map((s, i) => store.append(`${p}-${s}`, e(), { expectedRevision: 'no_stream', keys: [keys[i]] })),
      );
      expect(settled.map((r) => r.status)).to.deep.equal(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
      expect(await stored(keys)).to.deep.equal(named([keys[0], keys[1], keys[3]]));
    });

    it('stores them with a lone append, an append of events already in the log, one stream twice in a batch, and not with a refused one', async () => {
      const p = `keyed-${randomUUID()}`;
      const [k1, k2, k3] = [key(p), key(p), key(p)];
      const events = e();
      await store.append(`${p}-1`, events, { expectedRevision: 'no_stream', keys: [k1] });
      await store.append(`${p}-1`, events, { expectedRevision: 'no_stream', keys: [k2] }); // a retry: answered as the original
      const refused = await store.append(`${p}-1`, e(), { expectedRevision: 'no_stream', keys: [k3] }).catch((err) => err);
      expect(refused).to.be.instanceOf(WrongExpectedRevisionError);
      // one stream twice in a batch: the per-stream path
      const [k4, k5] = [key(p), key(p)];
      await Promise.all([k4, k5].map((k) => store.append(`${p}-2`, e(), { keys: [k] })));
      expect(await stored([k1, k2, k3, k4, k5])).to.deep.equal(named([k1, k2, k4, k5]));
    });

    it('appendMany stores them with the whole call, or none when a stream refuses it', async () => {
      const p = `keyed-${randomUUID()}`;
      const [k1, k2, k3] = [key(p), key(p), key(p)];
      await store.appendMany!([
        { streamId: `${p}-1`, events: e(), expectedRevision: 'no_stream', keys: [k1] },
        { streamId: `${p}-2`, events: e(), expectedRevision: 'no_stream', keys: [k2] },
      ]);
      const refused = await store
        .appendMany!([
          { streamId: `${p}-3`, events: e(), expectedRevision: 'no_stream', keys: [k3] },
          { streamId: `${p}-1`, events: e(), expectedRevision: 'no_stream' },
        ])
        .catch((err) => err);
      expect(refused).to.be.instanceOf(WrongExpectedRevisionError);
      expect(await stored([k1, k2, k3])).to.deep.equal(named([k1, k2]));
      expect(await store.readStream(`${p}-3`)).to.deep.equal([]);
    });
  });

  it("wakes another process's subscribers at once through the commit notice (append and appendMany), and on a bare NOTIFY", async () => {
    // polls far apart: only a notification can deliver within the test's time
    const other = createPostgresEventStore({ connectionString: db.url, pollIntervalMs: 60_000 });
    const seen: string[] = [];
    const s = `wake${randomUUID().slice(0, 8)}`;
    const sub = other.subscribe({ after: START, streamPrefixes: [`${s}-`], onEvents: async (events) => void seen.push(...events.map((e) => e.type)) });
    const until = async (n: number) => {
      const end = Date.now() + 5000;
      while (seen.length < n) {
        if (Date.now() > end) throw new Error(`saw ${seen.length} of ${n}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    try {
      await until(0);
      await new Promise((r) => setTimeout(r, 200)); // the subscription's first read and LISTEN are done
      await store.append(`${s}-1`, [{ id: randomUUID(), type: 'A', data: {} }]);
      await until(1);
      await store.appendMany!([{ streamId: `${s}-2`, events: [{ id: randomUUID(), type: 'B', data: {} }] }]);
      await until(2);
      // an event written without a notice of ours (another writer, an older version), then a bare NOTIFY
      await db.db.raw(`INSERT INTO events (stream_id, revision, event_id, type, data, metadata) VALUES (?, 0, gen_random_uuid(), 'C', '{}', '{}')`, [`${s}-3`]);
      await db.db.raw(`NOTIFY events`);
      await until(3);
      expect(seen).to.deep.equal(['A', 'B', 'C']);
    } finally {
      await sub.close();
      await other.close();
    }
  });

  it('sends other processes one notice per interval however many appends commit in it, and the last one is never held back', async () => {
    const listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    const notices: string[] = [];
    listener.on('notification', (m) => notices.push(m.payload ?? ''));
    await listener.query('LISTEN events');
    const writer = createPostgresEventStore({ connectionString: db.url, minNoticeIntervalMs: 200 });
    try {
      const started = Date.now();
      for (let i = 0; i < 30; i++) await writer.append(`burst-${i}`, [{ id: randomUUID(), type: 'T', data: {} }]);
      const elapsed = Date.now() - started;
      await writer.append(`other-1`, [{ id: randomUUID(), type: 'T', data: {} }]);
      await new Promise((r) => setTimeout(r, 600));
      // one notice per 200 ms of appending (plus the first and the last), not one per append
      expect(notices.length).to.be.at.most(Math.ceil(elapsed / 200) + 2);
      expect(notices.join(' ')).to.include('burst-').and.include('other-');
    } finally {
      await writer.close();
      await listener.end();
    }
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

  it('appends by index lookups only, even in a fresh database under concurrent bulk appends', async () => {
    // A cold planner once chose sequential scans inside append_events, and a 500-stream appendMany
    // kept them for every call (migration 014): count the scans such a burst makes on `events`.
    const fresh = await createTestDatabase();
    const bulk = createPostgresEventStore({ connectionString: fresh.url, poolSize: 8 });
    const seqScans = async () => {
      await fresh.db.raw('SELECT pg_stat_force_next_flush()');
      return Number((await fresh.db.raw(`SELECT seq_scan FROM pg_stat_user_tables WHERE relname = 'events'`)).rows[0].seq_scan);
    };
    const chunk = (k: number) =>
      Array.from({ length: 500 }, (_, i) => ({
        streamId: `bulk-${k}-${i}`,
        expectedRevision: 'no_stream' as const,
        events: [0, 1, 2].map(() => ({ id: randomUUID(), type: 'T', data: { html: 'x'.repeat(200) } })),
      }));
    try {
      const before = await seqScans();
      for (let round = 0; round < 3; round++) await Promise.all(Array.from({ length: 8 }, (_, w) => bulk.appendMany!(chunk(round * 8 + w))));
      // a handful come from elsewhere (statistics, the store's own reads); one per appended stream would be thousands
      expect((await seqScans()) - before).to.be.below(50);
      expect(Number((await fresh.db('events').count('* as n').first())?.n)).to.equal(24 * 500 * 3);
    } finally {
      await bulk.close();
      await fresh.drop();
    }
  });

  it('looks up the event ids of a batch of appends, whatever the size of the log', async () => {
    // The check that a batch's event ids are new once joined them to the log's event id index: the
    // planner guesses 10,000 ids for any batch, so on a log it takes for smaller than that (a young one)
    // walking the whole index looked cheaper than looking each id up, and every batch of concurrent
    // appends read all the log's ids (single appends ran at a third of their rate).
    const big = await createTestDatabase();
    await big.db.raw(`INSERT INTO events (stream_id, revision, event_id, type, data, metadata)
      SELECT 'old-' || g, 0, gen_random_uuid(), 'T', '{}', '{}' FROM generate_series(1, 8000) g`);
    await big.db.raw('ANALYZE events');
    const eventIdIndex = `indexrelname = 'events_event_id_key'`;
    try {
      const before = await indexEntriesRead(big.db, eventIdIndex);
      const writer = createPostgresEventStore({ connectionString: big.url });
      const appends = Array.from({ length: 20 }, (_, i) =>
        writer.append(`new-${i}`, [{ id: randomUUID(), type: 'T', data: {} }], { expectedRevision: i % 2 ? 'no_stream' : 'any' }),
      );
      await Promise.all([...appends, writer.appendMany!([{ streamId: 'many-1', expectedRevision: 'no_stream', events: [{ id: randomUUID(), type: 'T', data: {} }] }])]);
      await writer.close();
      expect((await indexEntriesRead(big.db, eventIdIndex)) - before).to.be.below(1000);
    } finally {
      await big.drop();
    }
  });

  it('reads in commit order by walking the index, not by scanning and sorting the log, even on stale statistics', async () => {
    const big = await createTestDatabase();
    const reader = createPostgresEventStore({ connectionString: big.url });
    try {
      // Statistics taken before message streams became common, as on a log whose traffic changed:
      // the planner then expects few matches and would rather scan and sort than walk the index.
      const insert = (prefix: string) =>
        big.db.raw(`INSERT INTO events (stream_id, revision, event_id, type, data, metadata)
          SELECT ? || g, 0, gen_random_uuid(), 'T', '{}', '{}' FROM generate_series(1, 100000) g`, [prefix]);
      await insert('contact-');
      await big.db.raw('ANALYZE events');
      await insert('message-');
      const scans = async () => {
        await big.db.raw('SELECT pg_stat_force_next_flush()');
        return (await big.db.raw(`SELECT seq_scan FROM pg_stat_user_tables WHERE relname = 'events'`)).rows[0].seq_scan as number;
      };
      const before = await scans();
      const batch = await reader.readAll({ after: START, limit: 2000, streamPrefixes: ['message-'] });
      expect(batch).to.have.length(2000);
      expect(batch[0].streamId).to.equal('message-1');
      expect((await scans()) - before).to.equal(0);
    } finally {
      await reader.close();
      await big.drop();
    }
  });

  it('orders by transaction id as a number: tx 9 comes before tx 10, and a full batch skips nothing', async () => {
    // Rows with chosen tx ids (the column is only a default), so the commit order crosses a digit
    // boundary: compared as text, '10' < '9', and a batch cut at the limit would move past tx 9's
    // second event without delivering it. Ids below any real transaction's: initdb alone takes
    // hundreds, but a cluster fresh from it has not reached 1000, and rows at or above the snapshot's
    // xmin are not visible to readers yet.
    const prefix = `digits-${randomUUID()}`;
    const insert = (stream: string, revision: number, txId: string) =>
      db.db.raw(`INSERT INTO events (stream_id, revision, event_id, type, data, metadata, tx_id) VALUES (?, ?, ?, 'T', '{}', '{}', ?::xid8)`, [
        `${prefix}-${stream}`,
        revision,
        randomUUID(),
        txId,
      ]);
    await insert('a', 0, '10');
    await insert('b', 0, '9');
    await insert('b', 1, '9');
    const order = (events: RecordedEvent[]) => events.map((e) => `${e.streamId.slice(prefix.length + 1)}${e.revision}`);

    expect(order(await store.readAll({ streamPrefixes: [prefix] }))).to.deep.equal(['b0', 'b1', 'a0']);
    expect(order(await store.readAll({ streamPrefixes: [prefix], limit: 2 }))).to.deep.equal(['b0', 'b1']);

    const seen: RecordedEvent[] = [];
    const sub = store.subscribe({ streamPrefixes: [prefix], limit: 2, onEvents: async (events) => void seen.push(...events) });
    try {
      const deadline = Date.now() + 3000;
      while (seen.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 200));
    } finally {
      await sub.close();
    }
    expect(order(seen)).to.deep.equal(['b0', 'b1', 'a0']);
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
