import net from 'node:net';
import { mkdtempSync } from 'node:fs';
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
    // A port the system just gave out as free (a fixed range collided with clients' ephemeral ports);
    // taken by someone else before the server binds it, the next free one.
    for (let attempt = 1; ; attempt++) {
      try {
        embedded = await startEmbeddedPostgres({
          dataDir: mkdtempSync(join(tmpdir(), 'courier-test-pg-')),
          port: await freePort(),
          database: 'postgres',
          persistent: false,
        });
        break;
      } catch (err) {
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
}
