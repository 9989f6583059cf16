import { expect } from 'chai';
import { projections } from '../../src/projections/registry.js';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { runningServer } from '../../src/adapters/db/embedded-postgres.js';
import { placeData } from '../../src/adapters/db/embedded-postgres-placement.js';
import { eventually } from '../support/email-setup.js';
import { runTs, type CommandResult } from '../support/run-command.js';
import { call } from '../support/http-call.js';
import { freePort, spawnServer, type SpawnedServer } from '../support/spawn-server.js';

// npm run replay / projections:rebuild / admin with nothing but the DATA_DIR npm start used: they must
// find the service's embedded PostgreSQL whether the service is running or not.

const PASSWORD = 'tools-test-password';
const EMAIL = 'admin@localhost';
const PROJECTIONS = projections.map((p) => p.name).join(', ');
// Whatever CI sets must not point the commands at another store.
// As `npm start` with nothing set: the embedded start keeps its generated ENCRYPTION_KEY in DATA_DIR,
// where the tools find it.
const UNSET = ['DATABASE_URL', 'REDIS_URL', 'EVENTSTORE_URL', 'ADMIN_EMAIL', 'JWT_SECRET', 'ENCRYPTION_KEY'];

const login = (base: string, password: string) => call(base, 'POST', '/api/auth/login', { body: { email: EMAIL, password } });

/** A failure an operator reads: one line on stderr, no stack trace, a non-zero exit. */
function expectOneLineFailure(result: CommandResult, pattern: RegExp) {
  expect(result.code, result.stdout + result.stderr).to.equal(1);
  const lines = result.stderr.trim().split('\n');
  expect(lines, result.stderr).to.have.length(1);
  expect(lines[0]).to.match(pattern);
}

describe('replay, projections:rebuild and admin against the embedded store of DATA_DIR', function () {
  this.timeout(120_000);

  let dataDir: string;
  let env: Record<string, string>;
  let service: SpawnedServer | undefined;
  let messageId: string;
  const tool = (file: string, ...args: string[]) => runTs(file, args, env, { unset: UNSET });
  const start = async () => (service = await spawnServer('all', env, { unset: UNSET, startTimeoutMs: 60_000 }));
  const databaseDir = () => placeData(dataDir, { record: false }).databaseDir;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'courier-tools-'));
    env = {
      DATA_DIR: dataDir,
      EMBEDDED_PG_PORT: String(await freePort()),
      PORT: String(await freePort()),
      ADMIN_PASSWORD: PASSWORD,
      NODE_NO_WARNINGS: '1',
    };
    const server = await start();
    const token = (await login(server.baseUrl, PASSWORD)).body.token as string;
    // 503 until the worker half has caught the accounts read model up.
    const domain = await eventually(() => call(server.baseUrl, 'POST', '/api/domains', { token, body: { domain: 'tools.example.com' } }), (r) => r.status !== 503, 20_000);
    expect(domain.status, JSON.stringify(domain.body)).to.equal(201);
    const key = await call(server.baseUrl, 'POST', '/api/api-keys', { token, body: { name: 'tools', scopes: ['send'] } });
    const sent = await call(server.baseUrl, 'POST', '/api/send/transactional', {
      key: key.body.key,
      body: { to: 'reader@example.org', fromEmail: 'app@tools.example.com', subject: 'Replayed', html: '<p>Hello</p>', text: 'Hello' },
    });
    expect(sent.status, JSON.stringify(sent.body)).to.equal(201);
    messageId = sent.body.messageLogId;
  });

  after(async function () {
    this.timeout(60_000);
    await service?.stop();
    const running = dataDir && runningServer(databaseDir());
    if (running) process.kill(running.pid, 'SIGINT');
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  describe('while the service runs', () => {
    it('replay prints the message stream from the running server', async () => {
      const running = runningServer(databaseDir());
      expect(running, 'the service runs its embedded PostgreSQL').to.not.equal(undefined);
      // A different EMBEDDED_PG_PORT: the command must use the running server's port, not start a second one.
      const result = await runTs('scripts/replay.ts', [messageId], { ...env, EMBEDDED_PG_PORT: String(await freePort()) }, { unset: UNSET });
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout).to.match(new RegExp(`^Message ${messageId}: \\d+ events`));
      expect(result.stdout).to.include(' EmailQueued by ');
      expect(runningServer(databaseDir())).to.deep.equal(running);
    });

    it('replay of an unknown id says so in one line and fails', async () => {
      expectOneLineFailure(await tool('scripts/replay.ts', 'no-such-message'), /^Unknown message no-such-message: no events for it in DATA_DIR /);
    });

    it('projections:rebuild rebuilds a read model the service keeps serving', async () => {
      const result = await tool('scripts/rebuild.ts', 'templates');
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout).to.match(/Rebuilt templates as generation \d+: .*now live\./);
      expect((await fetch(`${service!.baseUrl}/healthz`)).status).to.equal(200);
    });

    it('projections:rebuild of an unknown name lists the valid names', async () => {
      expectOneLineFailure(await tool('scripts/rebuild.ts', 'nope'), new RegExp(`^Unknown projection "nope"\\. Known: ${PROJECTIONS}$`));
    });

    it('admin reset-password prints a new password once, the running service accepts it, and the change is an event by cli', async () => {
      const result = await tool('scripts/admin.ts', 'reset-password', EMAIL);
      expect(result.code, result.stderr).to.equal(0);
      const match = /^New password for admin@localhost \(shown once\): (\S+)\n$/.exec(result.stdout);
      expect(match, result.stdout).to.not.equal(null);
      const fresh = match![1];
      expect((await login(service!.baseUrl, fresh)).status).to.equal(200);
      expect((await login(service!.baseUrl, PASSWORD)).status).to.equal(401);

      const client = new pg.Client({ connectionString: `postgres://postgres:password@127.0.0.1:${runningServer(databaseDir())!.port}/courier` });
      await client.connect();
      try {
        const { rows } = await client.query(`SELECT data, metadata FROM events WHERE stream_id = 'user-admin@localhost' AND type = 'UserPasswordChanged'`);
        expect(rows).to.have.length(1);
        expect(rows[0].metadata).to.include({ actor: 'cli' });
        expect(rows[0].data).to.not.have.property('password');
        expect(JSON.stringify(rows[0].data)).to.not.include(fresh);
      } finally {
        await client.end();
      }
      env.ADMIN_PASSWORD = fresh;
    });

    it('admin reset-password of an unknown email says so in one line and fails', async () => {
      expectOneLineFailure(await tool('scripts/admin.ts', 'reset-password', 'nobody@example.com'), /^Unknown user nobody@example\.com: /);
    });

    it('a second npm start on the same DATA_DIR refuses in one line instead of starting a second server', async () => {
      const result = await runTs('src/main.ts', ['all'], { ...env, PORT: String(await freePort()) }, { unset: UNSET });
      expectOneLineFailure(result, /^The embedded PostgreSQL of DATA_DIR .* is already running \(pid \d+, port \d+\): .*Stop it first/);
    });
  });

  describe('while the service is stopped', () => {
    before(async () => {
      await service!.stop();
      service = undefined;
      expect(runningServer(databaseDir())).to.equal(undefined);
    });

    it('replay starts the embedded server, prints, and stops it again', async () => {
      const result = await tool('scripts/replay.ts', messageId);
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout).to.include(' EmailQueued by ');
      expect(runningServer(databaseDir()), 'PostgreSQL left running').to.equal(undefined);
      expectOneLineFailure(await tool('scripts/replay.ts', 'no-such-message'), /^Unknown message no-such-message: /);
    });

    it('projections:rebuild works and stops the server it started', async () => {
      const result = await tool('scripts/rebuild.ts', 'accounts');
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout).to.match(/Rebuilt accounts as generation \d+/);
      expect(runningServer(databaseDir())).to.equal(undefined);
    });

    it('admin reset-password takes effect at the next start', async () => {
      const result = await tool('scripts/admin.ts', 'reset-password', EMAIL);
      expect(result.code, result.stderr).to.equal(0);
      const fresh = /\(shown once\): (\S+)/.exec(result.stdout)![1];
      const server = await start();
      // ADMIN_PASSWORD is the first boot's: it changes nothing now, and the start says so.
      expect(server.stdout()).to.include('ADMIN_PASSWORD is used at first boot only');
      expect((await login(server.baseUrl, fresh)).status).to.equal(200);
      expect((await login(server.baseUrl, env.ADMIN_PASSWORD)).status).to.equal(401);
      await server.stop();
      service = undefined;
    });

    it('a DATA_DIR without data is an error, not a new empty database', async () => {
      const empty = join(dataDir, 'elsewhere');
      const result = await runTs('scripts/replay.ts', [messageId], { ...env, DATA_DIR: empty }, { unset: UNSET });
      expectOneLineFailure(result, /^No Courier Ledger data in DATA_DIR .*elsewhere: start the service once with npm start/);
      expect(existsSync(empty)).to.equal(false);
    });
  });
});
