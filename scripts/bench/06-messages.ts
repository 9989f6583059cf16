import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../../src/config/env.js';
import { createApplication } from '../../src/application.js';
import { createLogger } from '../../src/logger.js';
import { messagesProjection } from '../../src/projections/messages.js';
import { messageCountsProjection } from '../../src/projections/message-counts.js';
import { rebuildProjection } from '../../src/projections/rebuild.js';
import { projections } from '../../src/projections/registry.js';
import { createProjectionRunner } from '../../src/projections/runner.js';
import { createTestDatabase } from '../../test/support/db.js';
import { seedMessages, untilProjected } from '../seed.js';
import { call, measureLatency, scaled, type BenchFigure, type BenchModule } from './lib.js';

const CAMPAIGN = 'bench-campaign';

/**
 * Issue 7: 1,000,000 messages (× BENCH_SCALE) seeded through the event log, a 100,000-message
 * campaign among them; p50/p99 of GET /api/messages (first page, a deep cursor page, an API key's
 * first page, a recipient search) and of the campaign aggregate, next to a `SELECT 1` round trip;
 * the messages and message_counts rebuilds in events/s next to a plain batched INSERT rate. The API runs with the
 * projection runner but without the workers (they would try to send a million seeded messages).
 */
const bench: BenchModule = {
  name: 'messages history',
  async run({ scale, log }) {
    const testDb = await createTestDatabase();
    const config = loadConfig({ DATABASE_URL: testDb.url, PORT: '0', ADMIN_EMAIL: 'admin@localhost', ADMIN_PASSWORD: 'bench-password', LOG_LEVEL: 'silent' });
    const logger = createLogger('silent');
    const application = await createApplication('api', { config, logger });
    const { infra, api, boot } = application as Required<typeof application>;
    const runner = createProjectionRunner({ db: infra.db, eventStore: infra.eventStore, projections, logger });
    await runner.start();
    const server: Server = await new Promise((resolve) => {
      const s = api.app.listen(0, '127.0.0.1', () => resolve(s));
    });
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      await api.waitFor('accounts', boot.position);
      const login = await call(baseUrl, 'POST', '/api/auth/login', { body: { email: 'admin@localhost', password: 'bench-password' } });
      const jwt = { authorization: `Bearer ${login.body.token}` };
      const key = await call(baseUrl, 'POST', '/api/api-keys', { headers: jwt, body: { name: 'bench', scopes: ['read_events'] } });
      const keyHeaders = { 'x-api-key': key.body.key };
      const accountId = (await infra.db('accounts').first('id')).id;

      const messages = scaled(1_000_000, scale, 1000);
      const campaignSize = scaled(100_000, scale, 100);
      let t = performance.now();
      let lastLog = 0;
      const seeded = await seedMessages({
        eventStore: infra.eventStore,
        accountId,
        apiKeyIds: [key.body.id, null, null, null],
        messages,
        campaign: { id: CAMPAIGN, size: campaignSize },
        // a tag and a metadata entry each, as tagged sends have: the counts keep rows per label
        labelled: true,
        onProgress(m) {
          if (performance.now() - lastLog > 10_000) {
            lastLog = performance.now();
            log(`seeding: ${m}/${messages} messages`);
          }
        },
      });
      const appendRate = seeded.events / ((performance.now() - t) / 1000);
      log(`seeded ${messages} messages (${campaignSize} in one campaign) as ${seeded.events} events at ${Math.round(appendRate)} events/s (appendMany, 500 streams a commit, 8 in flight)`);
      t = performance.now();
      const appliedBefore = Number((await infra.db('projection_checkpoints').where({ name: 'messages', status: 'active' }).first('events'))?.events ?? 0);
      await untilProjected(infra.db, (applied, total) => {
        if (performance.now() - lastLog > 10_000) {
          lastLog = performance.now();
          log(`live projection: ${applied}/${total} events`);
        }
      });
      const catchUp = (seeded.events - appliedBefore) / ((performance.now() - t) / 1000);
      log(`live projection: ${appliedBefore} events applied while seeding, the other ${seeded.events - appliedBefore} at ${Math.round(catchUp)} events/s (all projections running, 500-event batches)`);
      // What autovacuum does after a bulk load, done now rather than whenever it gets round to it.
      await infra.db.raw('VACUUM ANALYZE messages_g1, message_events_g1');

      const select1 = await measureLatency(() => infra.db.raw('SELECT 1'), 500);
      const healthz = await measureLatency(() => call(baseUrl, 'GET', '/healthz'), 300);
      log(`baseline SELECT 1: p50 ${select1.p50.toFixed(2)} ms, p99 ${select1.p99.toFixed(2)} ms; GET /healthz p50 ${healthz.p50.toFixed(2)} ms, p99 ${healthz.p99.toFixed(2)} ms`);
      const get = async (path: string, headers: Record<string, string> = jwt) => {
        const res = await call(baseUrl, 'GET', path, { headers });
        if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
        return res.body;
      };

      const first = await measureLatency(() => get('/api/messages'), 300);
      const keyFirst = await measureLatency(() => get('/api/messages', keyHeaders), 300);
      // Deep pages: cursors at random depths in the second half of the history. The cursor is opaque
      // to callers; the bench writes it the way the API does to jump there without paging 5,000 times.
      const deepRows = await infra.db('messages').where({ account_id: accountId }).orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).offset(Math.floor(messages / 2)).limit(messages / 2).select('id', 'created_at');
      const cursorAt = (i: number) => {
        const row = deepRows[(i * 7919) % deepRows.length];
        return Buffer.from(JSON.stringify([new Date(row.created_at).toISOString(), row.id])).toString('base64url');
      };
      const deepCheck = await get(`/api/messages?cursor=${cursorAt(0)}`);
      if (deepCheck.items.length !== 25) throw new Error('deep page is not full');
      const deep = await measureLatency((i) => get(`/api/messages?cursor=${cursorAt(i)}`), 300);
      const search = await measureLatency(async (i) => {
        const n = (i * 104_729) % messages;
        const body = await get(`/api/messages?search=${encodeURIComponent(`user${n}@`)}`);
        if (body.items.length !== 1) throw new Error(`search for user${n}@ found ${body.items.length}`);
      }, 300);
      const aggregate = await measureLatency(async () => {
        const body = await get(`/api/messages/aggregate?campaignId=${CAMPAIGN}`);
        if (body.total !== campaignSize) throw new Error(`campaign aggregate total ${body.total}, expected ${campaignSize}`);
      }, 200);
      const fmt = (m: { p50: number; p99: number }) => `p50 ${m.p50.toFixed(2)} ms, p99 ${m.p99.toFixed(2)} ms`;
      log(`list first page ${fmt(first)}; API key first page ${fmt(keyFirst)}; deep cursor page ${fmt(deep)}; search ${fmt(search)}; campaign aggregate ${fmt(aggregate)}`);

      // Plain INSERT rate: the same number of rows, 1,000 a statement, no indexes but the key.
      await infra.db.raw('CREATE TABLE bench_plain (id bigint PRIMARY KEY, a text, b text, n int, at timestamptz)');
      const plainRows = Math.min(seeded.events, 500_000);
      t = performance.now();
      for (let i = 0; i < plainRows; i += 1000) {
        const rows = Array.from({ length: Math.min(1000, plainRows - i) }, (_, k) => ({ id: i + k, a: `user${i + k}@example.org`, b: 'sent', n: k, at: new Date() }));
        await infra.db('bench_plain').insert(rows);
      }
      const plainRate = plainRows / ((performance.now() - t) / 1000);
      log(`plain INSERT: ${plainRows} rows at ${Math.round(plainRate)} rows/s`);

      const rebuilt = await rebuildProjection({ db: infra.db, eventStore: infra.eventStore, projection: messagesProjection });
      const rebuildRate = rebuilt.events / rebuilt.seconds;
      log(`rebuild: ${rebuilt.events} events in ${rebuilt.seconds.toFixed(1)} s into generation ${rebuilt.generation}`);
      // the chart's counts: per status, tag and metadata entry, each message's counts moving with its status
      const counts = await rebuildProjection({ db: infra.db, eventStore: infra.eventStore, projection: messageCountsProjection });
      log(`message_counts rebuild: ${counts.events} events in ${counts.seconds.toFixed(1)} s`);

      const p = (name: string, m: { p50: number; p99: number }, aim?: string): BenchFigure[] => [
        { name: `${name} p50`, value: m.p50, unit: 'ms', baseline: { name: 'SELECT 1 round trip p50', value: select1.p50 } },
        { name: `${name} p99`, value: m.p99, unit: 'ms', baseline: { name: 'SELECT 1 round trip p99', value: select1.p99 }, aim },
      ];
      return [
        ...p('GET /api/messages first page (JWT, whole account)', first, '< 50 ms'),
        ...p('GET /api/messages first page (API key)', keyFirst, '< 50 ms'),
        ...p('GET /api/messages deep cursor page', deep, '< 50 ms'),
        ...p('GET /api/messages?search=<recipient>', search),
        ...p(`GET /api/messages/aggregate?campaignId (${campaignSize} messages)`, aggregate, '< 100 ms'),
        { name: 'messages rebuild', value: rebuildRate, unit: 'events/s', baseline: { name: 'plain batched INSERT rows/s', value: plainRate }, aim: '≥ 20,000 events/s' },
        { name: 'message_counts rebuild', value: counts.events / counts.seconds, unit: 'events/s', baseline: { name: 'plain batched INSERT rows/s', value: plainRate } },
        { name: 'seed appends through the event store', value: appendRate, unit: 'events/s', baseline: { name: 'plain batched INSERT rows/s', value: plainRate } },
        { name: 'live projection catch-up', value: catchUp, unit: 'events/s', baseline: { name: 'plain batched INSERT rows/s', value: plainRate } },
      ];
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections?.();
      await runner.stop();
      await application.stop();
      await testDb.drop();
    }
  },
};
export default bench;
