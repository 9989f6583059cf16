import { expect } from 'chai';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { createPostgresEventStore } from '../../../src/adapters/eventstore/postgres-event-store.js';
import { createLogTail, type LogPage } from '../../../src/adapters/eventstore/log-tail.js';
import { START, type EventStore, type Position, type RecordedEvent } from '../../../src/ports/event-store.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';

const at = (n: number): Position => ({ commit: BigInt(n), prepare: BigInt(n) });
const event = (n: number, type = 'T', streamId = `s-${n}`): RecordedEvent => ({
  id: `e${n}`, streamId, revision: 0, type, data: {}, metadata: {}, schemaVersion: 1, recordedAt: new Date(0), position: at(n),
});

describe('the shared log tail', () => {
  describe('over a log in memory', () => {
    /** a log of `n` events read in pages, counting the reads */
    function log(n: number) {
      const events = Array.from({ length: n }, (_, i) => event(i + 1, i % 2 ? 'Odd' : 'Even'));
      const reads: { after: number; limit: number }[] = [];
      return {
        events,
        reads,
        async read(after: Position, limit: number): Promise<LogPage> {
          reads.push({ after: Number(after.prepare), limit });
          // the snapshot is taken when the read begins
          const page = events.filter((e) => e.position.prepare > after.prepare).slice(0, limit);
          const head = events.length ? events[events.length - 1].position : null;
          await new Promise((r) => setTimeout(r, 5));
          return { events: page, head, held: false };
        },
      };
    }
    const everything = () => true;

    it('starts at the head: a reader behind it is sent to the log; new events come from memory, filtered', async () => {
      const l = log(10);
      const tail = createLogTail({ read: l.read, pageSize: 4 });
      expect(await tail.read(START, 100, everything)).to.equal(null);
      expect(l.reads).to.deep.equal([{ after: 0, limit: 0 }]);
      const none = await tail.read(at(10), 100, everything);
      expect(none).to.deep.include({ events: [], complete: true });
      l.events.push(event(11, 'Even'), event(12, 'Odd'), event(13, 'Even'));
      const evens = await tail.read(at(10), 100, (e) => e.type === 'Even');
      expect(evens!.events.map((e) => e.id)).to.deep.equal(['e11', 'e13']);
      expect(evens!.head).to.deep.equal(at(13));
      expect(await tail.read(at(9), 100, everything)).to.equal(null);
    });

    it('reads a backlog a page at a time and says so, a reader limited to fewer taking them in turn', async () => {
      const l = log(0);
      const tail = createLogTail({ read: l.read, pageSize: 4 });
      await tail.read(START, 10, everything);
      for (let i = 1; i <= 10; i++) l.events.push(event(i));
      const first = await tail.read(START, 3, everything);
      expect(first!.events.map((e) => e.id)).to.deep.equal(['e1', 'e2', 'e3']);
      expect(first!.complete).to.equal(false);
      const rest: string[] = [];
      let position = first!.events[2].position;
      for (let guard = 0; guard < 10; guard++) {
        const answer = (await tail.read(position, 3, everything))!;
        rest.push(...answer.events.map((e) => e.id));
        position = answer.events.at(-1)?.position ?? answer.head;
        if (answer.complete && answer.events.length < 3) break;
      }
      expect(rest).to.deep.equal(['e4', 'e5', 'e6', 'e7', 'e8', 'e9', 'e10']);
    });

    it('keeps its capacity in events: a reader left behind the kept stretch is sent to the log', async () => {
      const l = log(0);
      const tail = createLogTail({ read: l.read, capacity: 5, pageSize: 100 });
      await tail.read(START, 10, everything);
      for (let i = 1; i <= 8; i++) l.events.push(event(i));
      expect(await tail.read(START, 10, everything)).to.equal(null);
      expect((await tail.read(at(3), 10, everything))!.events.map((e) => e.id)).to.deep.equal(['e4', 'e5', 'e6', 'e7', 'e8']);
      expect(await tail.read(at(2), 10, everything)).to.equal(null);
    });

    it('keeps its capacity in characters of data: large events are kept fewer', async () => {
      const l = log(0);
      const tail = createLogTail({ read: l.read, capacityChars: 3 * (256 + 1000) + 10, pageSize: 100 });
      await tail.read(START, 10, everything);
      for (let i = 1; i <= 6; i++) l.events.push({ ...event(i), data: { html: 'x'.repeat(1000), n: i } });
      expect((await tail.read(at(3), 10, everything))!.events.map((e) => e.id)).to.deep.equal(['e4', 'e5', 'e6']);
      expect(await tail.read(at(2), 10, everything)).to.equal(null);
    });

    it('shares a read among the readers that ask while it waits, and never one that began before they asked', async () => {
      const l = log(0);
      const tail = createLogTail({ read: l.read });
      await tail.read(START, 10, everything);
      l.reads.length = 0;
      const first = tail.read(START, 10, everything); // starts a read now
      l.events.push(event(1)); // committed after that read began
      const later = Array.from({ length: 5 }, () => tail.read(START, 10, everything));
      expect((await first)!.events).to.have.length(0);
      for (const answer of await Promise.all(later)) expect(answer!.events.map((e) => e.id)).to.deep.equal(['e1']);
      expect(l.reads).to.have.length(2);
    });
  });

  describe('under the PostgreSQL store', function () {
    this.timeout(120_000);
    let db: TestDatabase;
    let store: EventStore;
    before(async () => {
      db = await createTestDatabase();
      store = createPostgresEventStore({ connectionString: db.url, pollIntervalMs: 50, sharedTailFrom: 1, sharedTailCapacity: 300 });
    });
    after(async () => {
      await store.close();
      await db.drop();
    });

    it('gives every follower its events exactly once and in commit order, whether it starts behind the tail or at it', async () => {
      const p = `tail-${randomUUID()}`;
      const followers = [
        { streamPrefixes: [`${p}-a`] },
        { streamPrefixes: [`${p}-a`, `${p}-b`], eventTypes: ['Kept'] },
        { eventTypes: ['Kept', 'Other'] },
        { streamPrefixes: [`${p}-`] },
        { streamPrefixes: [`${p}-c`], limit: 7 },
        { streamPrefixes: [`${p}-`], limit: 1 },
      ];
      const wanted = (f: (typeof followers)[number], e: RecordedEvent) =>
        e.streamId.startsWith(p) && (!f.streamPrefixes || f.streamPrefixes.some((x) => e.streamId.startsWith(x))) && (!f.eventTypes || f.eventTypes.includes(e.type));
      await store.append(`${p}-a-0`, [{ id: randomUUID(), type: 'Kept', data: { n: -1 } }]); // before every follower
      const seen = followers.map(() => [] as RecordedEvent[]);
      const subs = followers.map((f, i) =>
        store.subscribe({ ...f, onEvents: async (events) => {
          seen[i].push(...events.filter((e) => e.streamId.startsWith(p)));
          if (i === 3) await new Promise((r) => setTimeout(r, 30)); // a slow one, left behind the tail
        } }),
      );
      const writers = Array.from({ length: 6 }, (_, w) =>
        (async () => {
          for (let i = 0; i < 250; i++) {
            const stream = `${p}-${'abc'[(w + i) % 3]}-${w}`;
            await store.append(stream, [{ id: randomUUID(), type: i % 3 ? 'Kept' : 'Other', data: { w, i } }, { id: randomUUID(), type: 'Skipped', data: { w, i } }]);
          }
        })(),
      );
      await Promise.all(writers);
      const log = (await store.readAll({ streamPrefixes: [p], limit: 10_000 }));
      expect(log).to.have.length(3001);
      try {
        const end = Date.now() + 60_000;
        const expected = followers.map((f) => log.filter((e) => wanted(f, e)).map((e) => e.id));
        while (Date.now() < end && !seen.every((s, i) => s.length >= expected[i].length)) await new Promise((r) => setTimeout(r, 50));
        await new Promise((r) => setTimeout(r, 300));
        seen.forEach((s, i) => expect(s.map((e) => e.id), `follower ${i}`).to.deep.equal(expected[i]));
      } finally {
        await Promise.all(subs.map((s) => s.close()));
      }
    });

    it('never passes an event whose transaction took a lower position but committed later', async () => {
      const prefix = `late-${randomUUID()}`;
      const seen = [[], [], [], []] as RecordedEvent[][];
      const subs = seen.map((s) => store.subscribe({ streamPrefixes: [prefix], onEvents: async (events) => void s.push(...events) }));
      const slow = new pg.Client({ connectionString: db.url });
      await slow.connect();
      try {
        await new Promise((r) => setTimeout(r, 200)); // the followers are at the tail
        await slow.query('BEGIN');
        await slow.query(`SELECT * FROM append_events($1, 'any', $2::uuid[], $3::text[], $4::int[], $5::jsonb[], $6::jsonb[])`, [`${prefix}-1`, [randomUUID()], ['Low'], [1], ['{}'], ['{}']]);
        await store.append(`${prefix}-2`, [{ id: randomUUID(), type: 'High', data: {} }]);
        await new Promise((r) => setTimeout(r, 400));
        for (const s of seen) expect(s).to.deep.equal([]);
        await slow.query('COMMIT');
        const end = Date.now() + 5000;
        while (seen.some((s) => s.length < 2) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
        for (const s of seen) expect(s.map((e) => e.type)).to.deep.equal(['Low', 'High']);
      } finally {
        await Promise.all(subs.map((s) => s.close()));
        await slow.end();
      }
    });
  });
});
