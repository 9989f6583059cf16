import { expect } from 'chai';
import { createDb, type Db } from '../../../src/adapters/db/knex.js';
import { LOCK_NOT_AVAILABLE, whileLocked } from '../../../src/adapters/db/session-lock.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';

describe('whileLocked', function () {
  this.timeout(30_000);
  let database: TestDatabase;
  let db: Db;
  before(async () => {
    database = await createTestDatabase();
    // one connection besides the holder's: the bounded wait runs on the one every later call reuses
    db = createDb(database.url, { pool: 2 });
  });
  after(async () => {
    await db.destroy();
    await database.drop();
  });

  it('runs one holder at a time, the next after the first', async () => {
    const order: string[] = [];
    let release!: () => void;
    // 'first out' as the holder's work ends, inside the lock: once the lock is given back, the second may
    // be told it has it before the first is told it let go
    const first = whileLocked(db, 'turn', () => new Promise<void>((r) => ((release = () => (order.push('first out'), r())), order.push('first in'))));
    while (order.length === 0) await new Promise((r) => setTimeout(r, 10));
    const second = whileLocked(db, 'turn', async () => order.push('second in'));
    await new Promise((r) => setTimeout(r, 200));
    release();
    await Promise.all([first, second]);
    expect(order).to.deep.equal(['first in', 'first out', 'second in']);
  });

  it('with waitMs, gives up with LOCK_NOT_AVAILABLE while another holds it, and leaves the connection without the bound', async () => {
    let release!: () => void;
    let held = false;
    const holder = whileLocked(db, 'busy', () => new Promise<void>((r) => ((release = r), (held = true))));
    while (!held) await new Promise((r) => setTimeout(r, 10));
    const started = Date.now();
    const err = await whileLocked(db, 'busy', async () => 'ran', { waitMs: 300 }).then(() => undefined, (e: { code?: string }) => e);
    expect(err?.code).to.equal(LOCK_NOT_AVAILABLE);
    expect(Date.now() - started).to.be.at.least(250);
    expect((await db.raw('SHOW lock_timeout')).rows[0].lock_timeout).to.equal('0');
    release();
    await holder;
    expect(await whileLocked(db, 'busy', async () => 'ran', { waitMs: 300 })).to.equal('ran');
  });
});
