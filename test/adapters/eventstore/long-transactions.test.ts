import { expect } from 'chai';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { findLongTransaction } from '../../../src/adapters/eventstore/long-transactions.js';
import { createPostgresEventStore } from '../../../src/adapters/eventstore/postgres-event-store.js';
import type { EventStore } from '../../../src/ports/event-store.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';

describe('long-open transactions (the PostgreSQL event store\'s readers wait for them)', function () {
  let db: TestDatabase;
  let store: EventStore;
  let other: pg.Client;
  let otherPid: number;
  before(async () => {
    db = await createTestDatabase();
    store = createPostgresEventStore({ connectionString: db.url, pollIntervalMs: 50 });
    other = new pg.Client({ connectionString: db.url });
    await other.connect();
    otherPid = (await other.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
  });
  after(async () => {
    await other.end();
    await store.close();
    await db.drop();
  });

  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const readIds = async (streamPrefix: string) => (await store.readAll({ streamPrefixes: [streamPrefix] })).map((e) => e.id);

  it('an open transaction that holds a transaction id keeps what commits after it from readers, and is named', async () => {
    await other.query('BEGIN');
    await other.query('SELECT pg_current_xact_id()');
    try {
      const id = randomUUID();
      await store.append(`held-${id}`, [{ id, type: 'Happened', data: {} }]);
      await pause(300);
      expect(await readIds(`held-${id}`)).to.deep.equal([]);
      const found = await findLongTransaction(db.db, 200);
      expect(found).to.include({ pid: otherPid, state: 'idle in transaction', database: new URL(db.url).pathname.slice(1) });
      expect(found!.seconds).to.be.greaterThan(0.2);
      expect(found!.query).to.equal('SELECT pg_current_xact_id()');

      await other.query('COMMIT');
      expect(await readIds(`held-${id}`)).to.deep.equal([id]);
    } finally {
      await other.query('ROLLBACK').catch(() => {});
    }
  });

  it("an open transaction of another database on the same server holds nothing back, and is not named", async () => {
    const elsewhere = await createTestDatabase({ migrate: false });
    const stranger = new pg.Client({ connectionString: elsewhere.url });
    await stranger.connect();
    try {
      await stranger.query('BEGIN');
      await stranger.query('SELECT pg_current_xact_id()');
      const id = randomUUID();
      await store.append(`elsewhere-${id}`, [{ id, type: 'Happened', data: {} }]);
      expect(await readIds(`elsewhere-${id}`)).to.deep.equal([id]);
      await pause(300);
      expect(await findLongTransaction(db.db, 200)).to.equal(undefined);
    } finally {
      await stranger.query('ROLLBACK').catch(() => {});
      await stranger.end();
      await elsewhere.drop();
    }
  });

  for (const [how, sharedTailFrom] of [['reading the log itself', 100], ['through the shared tail', 1]] as const) {
    it(`a subscriber woken for a commit that an open transaction holds back gets it soon after that transaction ends, not at its next poll (${how})`, async () => {
      const follower = createPostgresEventStore({ connectionString: db.url, pollIntervalMs: 10_000, sharedTailFrom });
      const id = randomUUID();
      const received: { id: string; at: number }[] = [];
      const sub = follower.subscribe({
        streamPrefixes: [`woken-${id}`],
        onEvents: async (events) => void received.push(...events.map((e) => ({ id: e.id, at: Date.now() }))),
      });
      try {
        await pause(300); // at the head, asleep until a commit wakes it
        await other.query('BEGIN');
        await other.query('SELECT pg_current_xact_id()');
        await store.append(`woken-${id}`, [{ id, type: 'Happened', data: {} }]);
        await pause(500);
        expect(received, 'held back while the older transaction runs').to.deep.equal([]);
        await other.query('COMMIT');
        const ended = Date.now();
        while (received.length === 0 && Date.now() - ended < 9_000) await pause(20);
        expect(received.map((r) => r.id)).to.deep.equal([id]);
        // the poll would have come 10 s after the wake; looking again while held, within about a second
        expect(received[0].at - ended).to.be.below(3_000);
      } finally {
        await other.query('ROLLBACK').catch(() => {});
        await sub.close();
        await follower.close();
      }
    });
  }

  it('a transaction without a transaction id (reads only) holds nobody back and is not named', async () => {
    await other.query('BEGIN');
    await other.query('SELECT 1');
    try {
      const id = randomUUID();
      await store.append(`read-only-${id}`, [{ id, type: 'Happened', data: {} }]);
      await pause(300);
      expect(await readIds(`read-only-${id}`)).to.deep.equal([id]);
      expect((await findLongTransaction(db.db, 200))?.pid).to.not.equal(otherPid);
    } finally {
      await other.query('ROLLBACK');
    }
  });
});
