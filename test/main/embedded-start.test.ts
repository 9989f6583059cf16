import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import net from 'node:net';
import pg from 'pg';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, spawnServer, type SpawnedServer } from '../support/spawn-server.js';

// `npm ci && npm start` on a fresh clone: no DATABASE_URL means the real entry point must bring up
// its own PostgreSQL under DATA_DIR, and a restart must find everything that was written before.

const FIRST_BOOT = 'First boot: created account "default" with owner admin@localhost';
const LISTENING = 'Courier Ledger API listening on';
const PASSWORD = 'embedded-start-password';

/** The postmaster's pid while it runs; postgres deletes the file on a clean shutdown. */
function postmasterPid(dataDir: string): number | undefined {
  const file = join(dataDir, 'postgres', 'postmaster.pid');
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

function processAlive(pid: number): boolean {
  try {
    // An orphaned postmaster is reaped by init; until then it is a zombie, which is not running.
    const state = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
}

function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number, detail: () => string = () => ''): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${detail()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function stopWithin(server: SpawnedServer, timeoutMs: number) {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), timeoutMs)));
  const result = await Promise.race([server.stop().then(() => server.exited), timeout]);
  clearTimeout(timer);
  if (result === 'hung') throw new Error(`process did not exit ${timeoutMs} ms after SIGTERM\n${server.output()}`);
  return result;
}

async function login(baseUrl: string, password: string) {
  return fetch(`${baseUrl}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'admin@localhost', password }),
  });
}

describe('npm start with no DATABASE_URL (embedded PostgreSQL)', function () {
  this.timeout(120_000);

  let dataDir: string;
  let pgPort: number;
  let env: Record<string, string>;
  const started: SpawnedServer[] = [];

  const start = async () => {
    const server = await spawnServer('all', env, {
      unset: ['DATABASE_URL', 'REDIS_URL', 'EVENTSTORE_URL', 'ADMIN_EMAIL', 'JWT_SECRET', 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'],
      startTimeoutMs: 60_000,
    });
    started.push(server);
    // /healthz can answer before the banner reaches the pipe; the banner comes after the first-boot lines.
    await until('the listening banner', () => server.stdout().includes(LISTENING), 10_000, server.output);
    return server;
  };

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'courier-embedded-start-'));
    pgPort = await freePort();
    env = {
      DATA_DIR: dataDir,
      EMBEDDED_PG_PORT: String(pgPort),
      PORT: String(await freePort()),
      ADMIN_PASSWORD: PASSWORD,
      LOG_LEVEL: 'silent',
      // unset (empty): the embedded start keeps a generated key in DATA_DIR, and a restart uses it
      ENCRYPTION_KEY: '',
    };
  });

  after(async function () {
    this.timeout(60_000);
    if (!dataDir) return;
    for (const server of started) {
      if (server.process.exitCode !== null || server.process.signalCode !== null) continue;
      await stopWithin(server, 20_000).catch(() => server.process.kill('SIGKILL'));
    }
    // If the app was killed, its postmaster is orphaned and would keep the port and the directory.
    const pid = postmasterPid(dataDir);
    if (pid && processAlive(pid)) {
      process.kill(pid, 'SIGINT');
      await until('the orphaned postmaster to stop', () => !processAlive(pid), 20_000).catch(() => process.kill(pid, 'SIGKILL'));
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('boots, keeps its data across a SIGTERM restart, and leaves no PostgreSQL behind', async () => {
    // First boot: initdb, migrations, account bootstrap.
    const first = await start();
    const health = await fetch(`${first.baseUrl}/healthz`);
    expect(health.status).to.equal(200);
    expect(await health.json()).to.deep.equal({ status: 'ok' });
    expect(first.stdout()).to.include(FIRST_BOOT);
    expect(first.stdout()).not.to.include('Generated admin password');
    // nothing on the console an operator cannot act on (the AWS SDK's notice about Node versions)
    expect(first.output()).not.to.include('NodeVersionSupportWarning');

    const pid = postmasterPid(dataDir);
    expect(pid, 'postmaster.pid under DATA_DIR/postgres').to.be.a('number');
    expect(processAlive(pid!)).to.equal(true);
    expect(await accepting(pgPort)).to.equal(true);
    // The service's own connections go through the server's Unix-domain socket, not loopback TCP.
    const viaTcp = new pg.Client({ connectionString: `postgres://postgres:password@127.0.0.1:${pgPort}/courier` });
    await viaTcp.connect();
    try {
      const { rows } = await viaTcp.query(
        `SELECT count(*) FILTER (WHERE client_addr IS NULL)::int AS socket, count(*) FILTER (WHERE client_addr IS NOT NULL)::int AS tcp
           FROM pg_stat_activity WHERE datname = 'courier' AND backend_type = 'client backend' AND pid <> pg_backend_pid()`,
      );
      expect(rows[0].socket, 'connections through the socket').to.be.above(0);
      expect(rows[0].tcp, 'connections through TCP').to.equal(0);
    } finally {
      await viaTcp.end();
    }

    const loginRes = await login(first.baseUrl, PASSWORD);
    expect(loginRes.status).to.equal(200);
    const { token } = (await loginRes.json()) as { token: string };
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const template = { name: 'Welcome', subject: 'Hello {{name}}', html: '<p>Hi {{name}}</p>', text: 'Hi {{name}}' };
    const created = await fetch(`${first.baseUrl}/api/templates`, { method: 'POST', headers: auth, body: JSON.stringify(template) });
    expect(created.status).to.equal(201);
    const { id } = (await created.json()) as { id: string };
    expect(id).to.be.a('string').and.not.equal('');

    const firstExit = await stopWithin(first, 30_000);
    expect(firstExit, first.output()).to.deep.equal({ code: 0, signal: null });
    expect(processAlive(pid!), 'embedded postmaster still running after the app exited').to.equal(false);
    expect(postmasterPid(dataDir), 'postmaster.pid left behind (unclean PostgreSQL shutdown)').to.equal(undefined);
    expect(await accepting(pgPort), 'embedded PostgreSQL port still accepting').to.equal(false);

    // Second boot on the same DATA_DIR: no initdb, no new account, same data.
    const second = await start();
    const health2 = await fetch(`${second.baseUrl}/healthz`);
    expect(health2.status).to.equal(200);
    expect(await health2.json()).to.deep.equal({ status: 'ok' });
    expect(second.stdout()).not.to.include('First boot');

    // The JWT signing key lives in the database when JWT_SECRET is unset, so the old token still works.
    const oldToken = await fetch(`${second.baseUrl}/api/templates/${id}`, { headers: auth });
    expect(oldToken.status).to.equal(200);
    expect(await oldToken.json()).to.include({ id, ...template });

    const relogin = await login(second.baseUrl, PASSWORD);
    expect(relogin.status).to.equal(200);
    expect((await login(second.baseUrl, 'not-the-password')).status).to.equal(401);
    const { token: token2 } = (await relogin.json()) as { token: string };
    const kept = await fetch(`${second.baseUrl}/api/templates/${id}`, { headers: { authorization: `Bearer ${token2}` } });
    expect(kept.status).to.equal(200);
    expect(await kept.json()).to.include({ id, ...template });

    const pid2 = postmasterPid(dataDir);
    expect(pid2).to.be.a('number').and.not.equal(pid);
    const secondExit = await stopWithin(second, 30_000);
    expect(secondExit, second.output()).to.deep.equal({ code: 0, signal: null });
    expect(processAlive(pid2!)).to.equal(false);
    expect(postmasterPid(dataDir)).to.equal(undefined);
    expect(await accepting(pgPort)).to.equal(false);
  });

  it('still exits promptly when PostgreSQL was stopped first (Ctrl-C reaches its whole process group)', async () => {
    const server = await start();
    const pid = postmasterPid(dataDir);
    expect(pid).to.be.a('number');
    process.kill(pid!, 'SIGINT');
    await until('the postmaster to stop', () => !processAlive(pid!), 20_000);
    // Waiting on the already-exited postmaster stalled shutdown until async-exit-hook's 10 s fallback.
    const startedAt = Date.now();
    const exit = await stopWithin(server, 30_000);
    const took = Date.now() - startedAt;
    expect(exit, server.output()).to.deep.equal({ code: 0, signal: null });
    expect(took, 'ms from SIGTERM to exit').to.be.below(8_000);
  });

  it('a PostgreSQL that crashed (its postmaster SIGKILLed) is started again, and the service serves again', async () => {
    const server = await start();
    const pid = postmasterPid(dataDir)!;
    process.kill(pid, 'SIGKILL');
    await until('a new postmaster', () => (postmasterPid(dataDir) ?? pid) !== pid && processAlive(postmasterPid(dataDir)!), 60_000, server.output);
    await until('a sign-in answered again', async () => (await login(server.baseUrl, PASSWORD).catch(() => undefined))?.status === 200, 60_000, server.output);
    const exit = await stopWithin(server, 30_000);
    expect(exit, server.output()).to.deep.equal({ code: 0, signal: null });
    expect(postmasterPid(dataDir)).to.equal(undefined);
  });

  it('after the service itself was SIGKILLed, the next start stops the PostgreSQL it left running and starts', async () => {
    const killed = await start();
    const orphan = postmasterPid(dataDir)!;
    killed.process.kill('SIGKILL');
    await killed.exited;
    expect(processAlive(orphan), 'the postmaster outlives its killed service').to.equal(true);
    const next = await start();
    expect(processAlive(orphan)).to.equal(false);
    expect((await login(next.baseUrl, PASSWORD)).status).to.equal(200);
    const exit = await stopWithin(next, 30_000);
    expect(exit, next.output()).to.deep.equal({ code: 0, signal: null });
  });
});
