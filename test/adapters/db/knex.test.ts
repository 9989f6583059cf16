import { expect } from 'chai';
import sinon from 'sinon';
import { createDb, migrate, query, type Db } from '../../../src/adapters/db/knex.js';
import { StartupError } from '../../../src/startup-error.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';

describe('database connections', () => {
  let testDb: TestDatabase;
  before(async () => {
    testDb = await createTestDatabase({ migrate: false });
  });
  after(async () => {
    await testDb.drop();
  });

  it("a pool's session settings hold on each of its connections", async () => {
    const db = createDb(testDb.url, { pool: 2, settings: { synchronous_commit: 'off', enable_seqscan: 'off' } });
    try {
      const shown = await Promise.all(
        [1, 2, 3].map(() => query<{ sync: string; seqscan: string }>(db, "SELECT current_setting('synchronous_commit') AS sync, current_setting('enable_seqscan') AS seqscan", [])),
      );
      expect(shown.map((rows) => rows[0])).to.deep.equal([1, 2, 3].map(() => ({ sync: 'off', seqscan: 'off' })));
    } finally {
      await db.destroy();
    }
  });

  it("knex's own warnings (a connection that could not be had) go to the logger given, not to stdout among the JSON log lines", async () => {
    const warnings: string[] = [];
    const printed = sinon.stub(console, 'log');
    const unreachable = createDb('postgres://postgres@127.0.0.1:1/nowhere', { pool: 1, logger: { warn: (m) => warnings.push(m), error: (m) => warnings.push(m) } });
    try {
      await unreachable.raw('SELECT 1').then(() => expect.fail('no server listens there'), () => undefined);
    } finally {
      printed.restore();
      await unreachable.destroy();
    }
    expect(warnings.some((w) => w.startsWith('Acquire connection error: '))).to.equal(true);
    expect(printed.called).to.equal(false);
  });

  it('a database a newer version migrated is refused at start in words an operator can act on', async () => {
    const db = createDb(testDb.url, { pool: 2 });
    try {
      await migrate(db);
      await db('knex_migrations').insert({ name: '999_from_a_newer_release.ts', batch: 99, migration_time: new Date() });
      const err = await migrate(db).then(() => undefined, (e: unknown) => e);
      expect(err).to.be.instanceOf(StartupError);
      expect((err as Error).message).to.equal(
        'This database was migrated by a newer version of Courier Ledger (migrations 999_from_a_newer_release.ts are not in this one): start that version or a newer one. Going back to an older version needs the backup taken before the upgrade.',
      );
    } finally {
      await db('knex_migrations').where({ name: '999_from_a_newer_release.ts' }).delete();
      await db.destroy();
    }
  });

  it('a database migrated before a migration was renamed (017_sandbox_email_attachments, now 018) starts, the renamed one not run again', async () => {
    const db = createDb(testDb.url, { pool: 2 });
    try {
      await migrate(db);
      await db('knex_migrations').where({ name: '018_sandbox_email_attachments' }).update({ name: '017_sandbox_email_attachments' });
      await migrate(db);
      const names = (await db('knex_migrations').select('name')).map((row: { name: string }) => row.name);
      expect(names.filter((name) => name.endsWith('_sandbox_email_attachments'))).to.deep.equal(['018_sandbox_email_attachments']);
    } finally {
      await db.destroy();
    }
  });

  describe('query() with a prepared statement', () => {
    let db: Db;
    before(async () => {
      // one connection, so every call below reuses the statement prepared on it
      db = createDb(testDb.url, { pool: 1 });
      await db.raw(`CREATE TABLE things_g1 (id text PRIMARY KEY, size text); INSERT INTO things_g1 VALUES ('a', 'large')`);
      await db.raw(`CREATE TABLE things_g2 (id text PRIMARY KEY, size int); INSERT INTO things_g2 VALUES ('a', 3)`);
      await db.raw('CREATE VIEW things AS SELECT * FROM things_g1');
    });
    after(async () => {
      await db.destroy();
    });

    it('still runs after a rebuild points its view at columns of another type', async () => {
      const size = async () => (await query<{ size: unknown }>(db, 'SELECT size FROM things WHERE id = $1', ['a'], 'thing_size'))[0].size;
      expect(await size()).to.equal('large');
      // what a projection's new generation does (src/projections/generations.ts)
      await db.raw('DROP VIEW things; CREATE VIEW things AS SELECT * FROM things_g2');
      expect(await size()).to.equal(3);
      expect(await size()).to.equal(3);
      await db.raw('DROP VIEW things; CREATE VIEW things AS SELECT * FROM things_g1');
      expect(await size()).to.equal('large');
    });
  });
});
