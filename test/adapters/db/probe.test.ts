import { expect } from 'chai';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { waitForDatabase } from '../../../src/adapters/db/probe.js';
import { StartupError } from '../../../src/startup-error.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { freePort } from '../../support/spawn-server.js';

let target: URL;

/** A TCP relay to the test's PostgreSQL on `port`, listening only from `afterMs` on: a server that comes up late. */
function lateRelay(port: number, afterMs: number): { close(): Promise<void> } {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
    }
    client.pipe(upstream).pipe(client);
  });
  const timer = setTimeout(() => server.listen(port, '127.0.0.1'), afterMs);
  return {
    close: () =>
      new Promise((resolve) => {
        clearTimeout(timer);
        sockets.forEach((s) => s.destroy());
        if (!server.listening) return resolve();
        server.close(() => resolve());
      }),
  };
}

describe('waiting for PostgreSQL at start', function () {
  this.timeout(30_000);
  let testDb: TestDatabase;
  before(async () => {
    testDb = await createTestDatabase({ migrate: false });
    target = new URL(testDb.url);
  });
  after(async () => testDb?.drop());
  const credentials = () => (target.password ? `${target.username}:${target.password}` : target.username || 'postgres');
  const urlAt = (port: number, auth = credentials()) => `postgres://${auth}@127.0.0.1:${port}${target.pathname}`;

  it('a server that starts accepting connections within the wait is waited for, and said so once', async () => {
    const port = await freePort();
    const relay = lateRelay(port, 1_500);
    const told: unknown[] = [];
    try {
      const started = Date.now();
      await waitForDatabase(urlAt(port), { waitMs: 20_000, logger: { warn: (detail: unknown) => void told.push(detail) } });
      expect(Date.now() - started).to.be.at.least(1_400);
      expect(told).to.have.length(1);
    } finally {
      await relay.close();
    }
  });

  it('nothing listening for longer than the wait: one clear line, with the password hidden', async () => {
    const port = await freePort();
    const err = await waitForDatabase(urlAt(port, 'someone:secret-password'), { waitMs: 1_000 }).then(() => undefined, (e: unknown) => e);
    expect(err).to.be.instanceOf(StartupError);
    expect((err as Error).message).to.match(new RegExp(`^Cannot connect to PostgreSQL at postgres://someone:\\*\\*\\*@127\\.0\\.0\\.1:${port}/.* \\(.*ECONNREFUSED.*\\): check that the server is running and that DATABASE_URL is right\\.$`));
  });

  it('a database that does not exist is refused at once, not waited for', async () => {
    const started = Date.now();
    const err = await waitForDatabase(`postgres://${credentials()}@127.0.0.1:${target.port || 5432}/no_such_database_here`, { waitMs: 20_000 }).then(() => undefined, (e: unknown) => e);
    expect(err).to.be.instanceOf(StartupError);
    expect((err as Error).message).to.include('does not exist');
    expect(Date.now() - started).to.be.below(5_000);
  });
});
