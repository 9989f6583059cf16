import { performance } from 'node:perf_hooks';
import { createTestDatabase } from '../../test/support/db.js';
import { spawnServer, type SpawnedServer } from '../../test/support/spawn-server.js';
import { call, measureClosedLoop, scaled, type BenchModule, prepareSendBench, BENCH_ADMIN } from './lib.js';

/**
 * Issue 4: accepted transactional sends per second and their p99 latency (sandbox provider, 50
 * concurrent clients, after a warm-up that is reported but not counted), next to the same server's
 * /healthz rate and p99 under the same clients, and how long after the last 201 every send had reached the provider (a row in
 * sandbox_emails). The service runs in its own process (API and workers, as `npm start`), so the load
 * generator does not share its event loop. Then the same number of sends again to the API role alone,
 * delivered afterwards by a worker role alone: the cost of delivery without the burst's contention.
 */
const bench: BenchModule = {
  name: 'transactional send',
  async run({ scale, log }) {
    const total = scaled(20_000, scale, 200);
    const concurrency = 50;
    const testDb = await createTestDatabase();
    const env = { DATABASE_URL: testDb.url, ADMIN_EMAIL: BENCH_ADMIN.email, ADMIN_PASSWORD: BENCH_ADMIN.password };
    let server = await spawnServer('all', env);
    let worker: SpawnedServer | undefined;
    try {
      let base = server.baseUrl;
      const { headers } = await prepareSendBench(base, BENCH_ADMIN);
      const body = (i: number) => ({
        to: `reader${i}@example.org`,
        fromEmail: 'app@bench.example.com',
        fromName: 'Bench',
        subject: `Order ${i} confirmed`,
        html: `<html><body><p>Thanks for order ${i}.</p><p><a href="https://shop.example.com/orders/${i}">View it</a></p></body></html>`,
        text: `Thanks for order ${i}.`,
      });
      const probe = await call(base, 'POST', '/api/send/transactional', { headers, body: body(-1) });
      if (probe.status !== 201) throw new Error(`probe send answered ${probe.status} ${JSON.stringify(probe.body)}`);

      // The baseline: the same server's no-op answered to the same closed loop of clients, so the send
      // figures can be read against how fast this machine was at the time (its speed varies 2-3x).
      const noop = () => call(base, 'GET', '/healthz');
      await measureClosedLoop(noop, { count: scaled(1_000, scale, 100), concurrency }); // warm-up, as for the sends below
      const healthz = await measureClosedLoop(noop, { count: scaled(10_000, scale, 100), concurrency });
      log(`/healthz: ${Math.round(healthz.perSecond)} req/s, p50 ${healthz.p50.toFixed(1)} ms, p99 ${healthz.p99.toFixed(1)} ms`);

      const rowCount = async (table: string, where: Record<string, string> = {}) => Number((await testDb.db(table).where(where).count({ n: '*' }).first())!.n);
      const atProvider = () => rowCount('sandbox_emails');
      /** Sends `count` messages from `concurrency` clients; the p99 and throughput of those. */
      const sendMany = (count: number, first: number) =>
        measureClosedLoop(
          async (i) => {
            const res = await call(base, 'POST', '/api/send/transactional', { headers, body: body(first + i) });
            if (res.status !== 201) throw new Error(`a send was refused: ${res.status} ${JSON.stringify(res.body)}`);
          },
          { count, concurrency },
        );
      /** Polls `count` until it reaches `expected` or two minutes have passed since `since`; the last count. */
      async function until(count: () => Promise<number>, expected: number, since: number) {
        for (let n = await count(); n < expected; n = await count()) {
          if (performance.now() - since > 120_000) return n;
          await new Promise((r) => setTimeout(r, 100));
        }
        return expected;
      }
      const untilAtProvider = (expected: number, since: number) => until(atProvider, expected, since);

      // Warm-up, not counted: the JIT, the connection pools and the database's plans and statistics
      // reach their steady state over the first seconds of load (the first second's p99 was ~1.5x the
      // rest). Measuring starts from a warm server whose worker has caught up.
      const warmup = scaled(2_000, scale, 100);
      const warm = await sendMany(warmup, 1_000_000);
      await untilAtProvider(warmup + 1, performance.now());
      log(`warm-up: ${warmup} sends, p50 ${warm.p50.toFixed(1)} ms, p99 ${warm.p99.toFixed(1)} ms (not counted), all at the provider`);

      const run = await sendMany(total, 0);
      log(`${total} accepted in ${run.seconds.toFixed(1)} s; p50 ${run.p50.toFixed(1)} ms, p99 ${run.p99.toFixed(1)} ms`);
      // Every accepted send (plus probe and warm-up) must reach the provider.
      const expected = total + warmup + 1;
      const reached = await untilAtProvider(expected, run.lastAnsweredAt);
      const drainSeconds = (performance.now() - run.lastAnsweredAt) / 1000;
      log(`${reached}/${expected} at the provider ${drainSeconds.toFixed(1)} s after the last 201`);

      // Delivery alone: the API role takes a backlog with no worker running, then a worker starts and
      // delivers it (provider, result, messages read model) with the machine to itself: what delivery
      // costs, which the burst's figures (the cores split between API and worker) cannot separate.
      await server.stop();
      server = await spawnServer('api', env);
      base = server.baseUrl;
      const backlog = await sendMany(total, 2_000_000);
      const startedAt = performance.now();
      worker = await spawnServer('worker', env);
      const delivered =
        (await untilAtProvider(expected + total, startedAt)) === expected + total &&
        (await until(() => rowCount('messages_g1', { status: 'sent' }), expected + total, startedAt)) === expected + total;
      const workerSeconds = (performance.now() - startedAt) / 1000;
      log(`API alone: ${total} accepted at ${Math.round(backlog.perSecond)}/s, p99 ${backlog.p99.toFixed(1)} ms; then a worker alone delivered them in ${workerSeconds.toFixed(1)} s (start included)`);

      return [
        { name: 'accepted sends', value: run.perSecond, unit: 'req/s', baseline: { name: '/healthz', value: healthz.perSecond }, aim: '≥ 1,500/s' },
        { name: 'send p99 latency', value: run.p99, unit: 'ms', baseline: { name: '/healthz p99', value: healthz.p99 }, aim: '< 50 ms' },
        { name: 'all sends at the provider after the last 201', value: reached >= expected ? drainSeconds : Number.POSITIVE_INFINITY, unit: 's', aim: '≤ 10 s' },
        {
          name: 'backlog delivered by a worker alone',
          value: delivered ? total / workerSeconds : 0,
          unit: 'sends/s',
          baseline: { name: 'the API alone accepting it', value: backlog.perSecond },
        },
      ];
    } finally {
      await server.stop();
      await worker?.stop();
      await testDb.drop();
    }
  },
};
export default bench;
