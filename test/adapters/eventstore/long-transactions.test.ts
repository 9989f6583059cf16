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
