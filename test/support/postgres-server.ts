import net from 'node:net';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../../src/adapters/db/embedded-postgres.js';
import { freePort } from './spawn-server.js';

/**
 * The PostgreSQL server the tests use: DATABASE_URL when set (CI sets it), else a server already on
 * 127.0.0.1:5432, else an embedded one started for this run. TEST_OWN_POSTGRES=true: always an
 * embedded one (scripts/test.ts runs a second stream of files on a server of its own).
 */
let serverUrl: string | undefined;
let embedded: EmbeddedPostgresHandle | undefined;
let embeddedDir: string | undefined;

const DIR_PREFIX = 'courier-test-pg-';

function pidIn(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function alive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The data folders of earlier runs that were killed before they could remove theirs (64 MB each): gone
 * when neither the run that made one nor its server is alive. A folder with no owner yet may be one a
 * run is setting up, and is left for ten minutes.
 */
function sweepAbandoned(): void {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(DIR_PREFIX)) continue;
    const dir = join(tmpdir(), name);
    const owner = pidIn(join(dir, 'postgres.owner'));
    if (alive(owner) || alive(pidIn(join(dir, 'postgres', 'postmaster.pid')))) continue;
    try {
      if (owner === undefined && Date.now() - statSync(dir).mtimeMs < 10 * 60_000) continue;
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // another run swept it first
    }
  }
}

function reachable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => {
      socket.end();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
    socket.setTimeout(1000, () => {
      socket.destroy();
      resolve(false);
    });
  });
}

export async function postgresServerUrl(): Promise<string> {
  if (serverUrl) return serverUrl;
  if (process.env.TEST_OWN_POSTGRES !== 'true' && process.env.DATABASE_URL) {
    serverUrl = process.env.DATABASE_URL;
  } else if (process.env.TEST_OWN_POSTGRES !== 'true' && (await reachable(5432))) {
    serverUrl = 'postgres://postgres@127.0.0.1:5432/postgres';
  } else {
    sweepAbandoned();
    // A port the system just gave out as free (a fixed range collided with clients' ephemeral ports);
    // taken by someone else before the server binds it, the next free one.
    for (let attempt = 1; ; attempt++) {
      embeddedDir = mkdtempSync(join(tmpdir(), DIR_PREFIX));
      try {
        embedded = await startEmbeddedPostgres({
          dataDir: embeddedDir,
          port: await freePort(),
          database: 'postgres',
          persistent: false,
        });
        break;
      } catch (err) {
        rmSync(embeddedDir, { recursive: true, force: true });
        if (attempt >= 3 || !/which is in use/.test(String(err))) throw err;
      }
    }
    serverUrl = embedded.url;
  }
  return serverUrl;
}

export async function stopEmbeddedServer(): Promise<void> {
  await embedded?.stop();
  embedded = undefined;
  // the server removed its data; the folder it was made in goes too
  if (embeddedDir) rmSync(embeddedDir, { recursive: true, force: true });
  embeddedDir = undefined;
}
