import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createPostgresEventStore } from '../../src/adapters/eventstore/postgres-event-store.js';
import { createProcessManagerRunner, type ProcessManager } from '../../src/process-managers/runner.js';
import type { EventStore, RecordedEvent } from '../../src/ports/event-store.js';
import type { JobQueue } from '../../src/ports/job-queue.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { eventually } from '../support/email-setup.js';

const unusedQueue = new Proxy({}, { get: () => () => Promise.reject(new Error('no job queue in this test')) }) as JobQueue;

describe('process manager runner', function () {
  this.timeout(30_000);
  let database: TestDatabase;
  let store: EventStore;
  const runners: { stop(): Promise<void> }[] = [];
  beforeEach(async () => {
    database = await createTestDatabase();
    store = createPostgresEventStore({ connectionString: database.url, pollIntervalMs: 50 });
  });
  afterEach(async () => {
    await Promise.all(runners.splice(0).map((r) => r.stop()));
    await store.close();
    await database.drop();
  });

  it('after a takeover while the old owner still runs (its lock connection died quietly), each event is handled once', async () => {
    const handled: string[] = [];
    const manager: ProcessManager = {
      name: 'counting',
      streamPrefixes: ['thing-'],
      async handle(events: RecordedEvent[]) {
        handled.push(...events.map((e) => e.id));
        // slow enough that both owners hold a batch at once
        await new Promise((r) => setTimeout(r, 50));
        return [];
      },
    };
    const start = () => {
      const runner = createProcessManagerRunner({ db: database.db, eventStore: store, queue: unusedQueue, managers: [manager], retryDelayMs: 50 });
      runner.start();
      runners.push(runner);
    };
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    const lockHolder = async () =>
      (await admin.query("SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = 7411 AND granted")).rows[0]?.pid as number | undefined;
    try {
      start();
      await eventually(lockHolder, Boolean);
      // The owner's lock goes away with its connection; it does not notice and keeps following the log.
      const first = await lockHolder();
      await admin.query('SELECT pg_terminate_backend($1)', [first]);
      start(); // a second owner takes the lock over
      await eventually(lockHolder, (pid) => ![undefined, first].includes(pid));

      const appended: string[] = [];
      for (let i = 0; i < 20; i++) {
        const id = randomUUID();
        await store.append(`thing-${i}`, [{ id, type: 'ThingHappened', data: { i } }]);
        appended.push(id);
      }
      await eventually(async () => new Set(handled).size, (n) => n === appended.length);
      await new Promise((r) => setTimeout(r, 500)); // both owners are done with what they read
      expect([...handled].sort()).to.deep.equal([...appended].sort());
    } finally {
      await admin.end();
    }
  });
});
