import { randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { createDataKeys } from '../../src/adapters/crypto/data-keys.js';
import { createMasterKey, type MasterKey } from '../../src/adapters/crypto/master-key.js';
import { messageStream } from '../../src/domain/messages/events.js';
import { messagesProjection } from '../../src/projections/messages.js';
import { rebuildProjection } from '../../src/projections/rebuild.js';
import { createPgKeyStore } from '../../src/adapters/crypto/pg-key-store.js';
import { createSealingEventStore } from '../../src/adapters/crypto/sealing-event-store.js';
import { createPostgresEventStore } from '../../src/adapters/eventstore/postgres-event-store.js';
import { START, type EventStore, type NewEvent } from '../../src/ports/event-store.js';
import { createTestDatabase } from '../../test/support/db.js';
import { emailQueued } from '../../test/support/messages-projection.js';
import { createDb } from '../../src/adapters/db/knex.js';
import { spawnServer, type SpawnedServer } from '../../test/support/spawn-server.js';
import { call, measureRates, scaled, type BenchModule, prepareSendBench, BENCH_ADMIN, median } from './lib.js';

const queued = (prefix: string, i: number, recipients: number): NewEvent => {
  const { type, data } = emailQueued(`${prefix}${i}`, {
    accountId: 'bench',
    to: `reader${i % recipients}@example.org`,
    subject: `Order ${i} confirmed`,
    html: `<html><body><p>Thanks for order ${i}.</p><p><a href="https://shop.example.com/orders/${i}">View it</a></p></body></html>`,
    text: `Thanks for order ${i}.`,
    queuedAt: new Date().toISOString(),
  });
  return { id: randomUUID(), type, data, metadata: { actor: 'bench', commandId: randomUUID() } };
};

/** Reads every event of the prefix the way a rebuild does (pages in log order); events per second. */
async function readAllRate(store: EventStore, prefix: string): Promise<number> {
  let after = START;
  let n = 0;
  const start = performance.now();
  for (;;) {
    const page = await store.readAll({ after, limit: 1000, streamPrefixes: [prefix] });
    if (page.length === 0) break;
    n += page.length;
    after = page[page.length - 1].position;
  }
  return n / ((performance.now() - start) / 1000);
}

/**
 * The messages read model rebuilt (rebuildProjection, as `npm run rebuild` does) from a log of
 * `events` queue events sealed, with a fresh key cache each round, and from the same log in clear, on
 * two databases, rounds alternating; the median events/s of each.
 */
async function rebuildRates(events: number, master: MasterKey, log: (line: string) => void): Promise<{ events: number; sealed: number; clear: number }> {
  const sealedDb = await createTestDatabase();
  const clearDb = await createTestDatabase();
  const sealedBare = createPostgresEventStore({ connectionString: sealedDb.url, poolSize: 4 });
  const clear = createPostgresEventStore({ connectionString: clearDb.url, poolSize: 4 });
  const keyStore = createPgKeyStore(sealedDb.db);
  const sealed = () => createSealingEventStore(sealedBare, { keys: createDataKeys({ store: keyStore, master }), master, store: keyStore, keysWithEvents: true });
  try {
    const recipients = Math.max(10, Math.round(events / 4));
    const writer = sealed();
    for (let i = 0; i < events; i += 500) {
      const batch = Array.from({ length: Math.min(500, events - i) }, (_, j) => i + j);
      const appends = (store: EventStore) => store.appendMany!(batch.map((k) => ({ streamId: messageStream(`r${k}`), events: [queued('r', k, recipients)], expectedRevision: 'no_stream' as const })));
      await appends(clear);
      await appends(writer);
    }
    const rates = { sealed: [] as number[], clear: [] as number[] };
    for (let round = 0; round < 3; round++) {
      const c = await rebuildProjection({ db: clearDb.db, eventStore: clear, projection: messagesProjection });
      rates.clear.push(c.events / c.seconds);
      const s = await rebuildProjection({ db: sealedDb.db, eventStore: sealed(), projection: messagesProjection });
      rates.sealed.push(s.events / s.seconds);
    }
    log(`messages rebuilds of ${events} events: sealed ${rates.sealed.map(Math.round).join(', ')}; clear ${rates.clear.map(Math.round).join(', ')} events/s`);
    return { events, sealed: median(rates.sealed), clear: median(rates.clear) };
  } finally {
    await sealedBare.close();
    await clear.close();
    await sealedDb.drop();
    await clearDb.drop();
  }
}

/** A service (`npm start`'s process) on a database of its own, ready to send; its send for the i-th message. */
async function sendingServer(env: Record<string, string>): Promise<{ server: SpawnedServer; send(i: number): Promise<void>; drop(): Promise<void> }> {
  const db = await createTestDatabase();
  let server: SpawnedServer | undefined;
  let headers: Record<string, string>;
  try {
    server = await spawnServer('all', { DATABASE_URL: db.url, ADMIN_EMAIL: BENCH_ADMIN.email, ADMIN_PASSWORD: BENCH_ADMIN.password, ENCRYPTION_KEY: randomBytes(32).toString('base64'), LOG_LEVEL: 'error', ...env }, {
      startTimeoutMs: 120_000, // a start takes over 30 s on a machine loaded 10 times over
    });
    ({ headers } = await prepareSendBench(server.baseUrl, BENCH_ADMIN));
  } catch (err) {
    await server?.stop().catch(() => {});
    await db.drop().catch(() => {});
    throw err;
  }
  const base = server.baseUrl;
  return {
    server,
    async send(i) {
      const { data } = queued('', i, Number.MAX_SAFE_INTEGER) as { data: Record<string, string> };
      const res = await call(base, 'POST', '/api/send/transactional', { headers, body: { to: data.to, fromEmail: 'app@bench.example.com', fromName: 'Bench', subject: data.subject, html: data.html, text: data.text } });
      if (res.status !== 201) throw new Error(`a send was refused: ${res.status} ${JSON.stringify(res.body)}; the service said: ${server!.output().slice(-2000)}`);
    },
    async drop() {
      await server!.stop();
      await db.drop();
    },
  };
}

/**
 * Issue 29: what sealing personal data costs (docs/privacy.md). The send path: accepted transactional
 * sends per second (each to a new recipient, so every send also makes that person's key: the worst
 * case) from 50 clients, to two services running side by side, one sealing and one with
 * SEAL_PERSONAL_DATA=false, in alternating windows. The store alone: the same queue events appended
 * through the sealing store and to the bare one, and a log of sealed queue events read and opened in
 * pages as a rebuild reads them, with an empty key cache as a fresh rebuild has, against the same
 * number of events in clear read from the bare store, in alternating rounds: where sealing weighs most,
 * since nothing else is done with the events. The rebuild: the messages read model rebuilt from a
 * sealed log and from the same log in clear (see rebuildRates). The aim, on the sends and the rebuild:
 * at most 10 % fewer per second with sealing.
 */
const bench: BenchModule = {
  name: 'personal data sealing',
  async run({ scale, log }) {
    const t = await createTestDatabase();
    const bare = createPostgresEventStore({ connectionString: t.url, poolSize: 16 });
    // as the service runs it on PostgreSQL (see createPgKeyStore)
    const keyWriter = createDb(t.url, { pool: 4, settings: { synchronous_commit: 'off' } });
    const keyStore = createPgKeyStore(t.db, keyWriter);
    const master = createMasterKey(randomBytes(32));
    const sealedStore = () => createSealingEventStore(bare, { keys: createDataKeys({ store: keyStore, master }), master, store: keyStore, keysWithEvents: true });
    let sealing: Awaited<ReturnType<typeof sendingServer>> | undefined;
    let clear: typeof sealing;
    try {
      sealing = await sendingServer({});
      clear = await sendingServer({ SEAL_PERSONAL_DATA: 'false' });
      const sends = await measureRates({ sealing: sealing.send, clear: clear.send }, { concurrency: 50, rounds: Math.max(2, Math.round(6 * scale)), windowMs: 2_000 });
      log(`sends: sealing ${Math.round(sends.sealing)}/s, clear ${Math.round(sends.clear)}/s`);
      await sealing.drop();
      await clear.drop();
      const sealed = sealedStore();
      const run = randomUUID().slice(0, 8);
      const { sealed: sealedRate, bare: bareRate } = await measureRates(
        {
          sealed: (i) => sealed.append(`message-s${run}-${i}`, [queued(`s${run}-`, i, Number.MAX_SAFE_INTEGER)], { expectedRevision: 'no_stream' }),
          bare: (i) => bare.append(`message-b${run}-${i}`, [queued(`b${run}-`, i, Number.MAX_SAFE_INTEGER)], { expectedRevision: 'no_stream' }),
        },
        { concurrency: 50 },
      );
      log(`appends: sealed ${Math.round(sealedRate)}/s, bare ${Math.round(bareRate)}/s`);

      // The rebuild's log: one event per message, many messages per recipient, as a real log has.
      const events = scaled(20_000, scale, 1_000);
      const recipients = Math.max(10, Math.round(events / 4));
      for (let i = 0; i < events; i += 500) {
        const batch = Array.from({ length: Math.min(500, events - i) }, (_, j) => i + j);
        await bare.appendMany!(batch.map((k) => ({ streamId: `plainlog-${k}`, events: [queued('p', k, recipients)], expectedRevision: 'no_stream' as const })));
        await sealed.appendMany!(batch.map((k) => ({ streamId: `sealedlog-${k}`, events: [queued('q', k, recipients)], expectedRevision: 'no_stream' as const })));
      }
      const bareReads: number[] = [];
      const sealedReads: number[] = [];
      for (let round = 0; round < 5; round++) {
        bareReads.push(await readAllRate(bare, 'plainlog-'));
        sealedReads.push(await readAllRate(sealedStore(), 'sealedlog-'));
      }
      log(`rebuild reads of ${events} events (${recipients} recipients): sealed ${sealedReads.map(Math.round).join(', ')}; bare ${bareReads.map(Math.round).join(', ')} events/s`);

      const rebuilds = await rebuildRates(scaled(100_000, scale, 2_000), master, log);

      return [
        {
          name: 'transactional sends, personal data sealed (a new recipient each), 50 clients',
          value: sends.sealing,
          unit: 'sends/s',
          baseline: { name: 'the same sends to a service with SEAL_PERSONAL_DATA=false', value: sends.clear },
          aim: '≥ 0.9× baseline',
        },
        {
          name: 'queue-event appends sealed (a new recipient each: a key created per append), 50 writers',
          value: sealedRate,
          unit: 'events/s',
          baseline: { name: 'the same appends to the bare store', value: bareRate },
        },
        {
          name: `rebuild reads of sealed queue events (fresh key cache), median of 5 rounds`,
          value: median(sealedReads),
          unit: 'events/s',
          baseline: { name: 'the same events in clear from the bare store', value: median(bareReads) },
        },
        {
          name: `messages read model rebuilt from ${rebuilds.events} sealed queue events (fresh key cache), median of 3 rounds`,
          value: rebuilds.sealed,
          unit: 'events/s',
          baseline: { name: 'the same rebuild from the events in clear', value: rebuilds.clear },
          aim: '≥ 0.9× baseline',
        },
      ];
    } finally {
      await sealing?.drop().catch(() => {});
      await clear?.drop().catch(() => {});
      await bare.close();
      await keyWriter.destroy();
      await t.drop();
    }
  },
};
export default bench;
