import { expect } from 'chai';
import { createDb } from '../../src/adapters/db/knex.js';
import { migrationSource } from '../../src/migrations/source.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { eventually } from '../support/email-setup.js';
import { spawnServer, type SpawnedServer } from '../support/spawn-server.js';

const ENV = { ADMIN_EMAIL: 'admin@localhost', ADMIN_PASSWORD: 'cold-start-password', LOG_LEVEL: 'info' };

/** Every migration ran exactly once. */
async function expectMigratedOnce(testDb: TestDatabase) {
  const runs = (await testDb.db('knex_migrations').orderBy('id').select('name')).map((r) => r.name);
  const all = (await migrationSource.getMigrations([])).map((m) => migrationSource.getMigrationName(m));
  expect(runs).to.deep.equal(all);
}

/** Starts every role of `roles` at the same moment; resolves once each has said it started (or throws with what it printed). */
async function startTogether(databaseUrl: string, roles: ('api' | 'worker')[], servers: SpawnedServer[]) {
  const started = await Promise.allSettled(roles.map((role) => spawnServer(role, { ...ENV, DATABASE_URL: databaseUrl }, { startTimeoutMs: 60_000 })));
  for (const s of started) if (s.status === 'fulfilled') servers.push(s.value);
  const failed = started.filter((s): s is PromiseRejectedResult => s.status === 'rejected');
  expect(failed.map((f) => String(f.reason).slice(0, 2000))).to.deep.equal([]);
  // A worker has no port to answer on: it says so in its log once its projections and jobs run.
  for (const server of servers) {
    await eventually(
      async () => ({ out: server.output(), exited: server.process.exitCode !== null || server.process.signalCode !== null }),
      (r) => r.exited || r.out.includes('"msg":"started"'),
      60_000,
    );
    expect(server.process.exitCode, server.output()).to.equal(null);
    expect(server.output()).to.include('"msg":"started"');
  }
}

describe('processes starting together on one database', function () {
  this.timeout(180_000);
  let testDb: TestDatabase;
  const servers: SpawnedServer[] = [];

  beforeEach(async () => {
    testDb = await createTestDatabase({ migrate: false });
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.stop()));
    await testDb.drop();
  });

  it('2 API and 2 worker processes started at once on an empty database all start, and every migration runs once', async () => {
    await startTogether(testDb.url, ['api', 'worker', 'api', 'worker'], servers);
    await expectMigratedOnce(testDb);
    const login = await fetch(`${servers[0].baseUrl}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: ENV.ADMIN_EMAIL, password: ENV.ADMIN_PASSWORD }),
    });
    expect(login.status).to.equal(200);
  });

  it('3 processes started at once on a database some migrations behind all start, and migrate it once', async () => {
    const older = createDb(testDb.url);
    try {
      for (let i = 0; i < 5; i++) await older.migrate.up();
    } finally {
      await older.destroy();
    }
    await startTogether(testDb.url, ['worker', 'api', 'worker'], servers);
    await expectMigratedOnce(testDb);
  });
});
