import { createTestDatabase } from '../../test/support/db.js';
import { spawnServer } from '../../test/support/spawn-server.js';
import { call, measureClosedLoop, scaled, type BenchModule, prepareSendBench, BENCH_ADMIN } from './lib.js';

const BATCH = 100;

/**
 * Issue 28: messages per second admitted through POST /api/send/batch (100 a request) against single
 * transactional sends in the same run, one server process as `npm start` runs it (its workers deliver
 * meanwhile, the same for both). Single and batch phases alternate, twice each after a warm-up of both, so a machine that
 * slows down during the run slows both; each figure sums its two phases.
 */
const bench: BenchModule = {
  name: 'batch send',
  async run({ scale, log }) {
    const perPhase = scaled(10_000, scale, 500);
    const testDb = await createTestDatabase();
    const env = { DATABASE_URL: testDb.url, ADMIN_EMAIL: BENCH_ADMIN.email, ADMIN_PASSWORD: BENCH_ADMIN.password };
    const server = await spawnServer('all', env);
    try {
      const base = server.baseUrl;
      const { headers } = await prepareSendBench(base, BENCH_ADMIN);
      const body = (i: number) => ({
        to: `reader${i}@example.org`,
        fromEmail: 'app@bench.example.com',
        subject: `Order ${i} confirmed`,
        html: `<p>Thanks for order ${i}.</p>`,
        text: `Thanks for order ${i}.`,
        tags: ['order'],
        metadata: { orderId: String(i) },
      });
      let next = 0;
      const singles = (count: number) =>
        measureClosedLoop(
          async () => {
            const res = await call(base, 'POST', '/api/send/transactional', { headers, body: body(next++) });
            if (res.status !== 201) throw new Error(`a send was refused: ${res.status} ${JSON.stringify(res.body)}`);
          },
          { count, concurrency: 50 },
        );
      const batches = (count: number) =>
        measureClosedLoop(
          async () => {
            const res = await call(base, 'POST', '/api/send/batch', { headers, body: { messages: Array.from({ length: BATCH }, () => body(next++)) } });
            if (res.status !== 200 || res.body.items.some((i: { status: number }) => i.status !== 201)) {
              throw new Error(`a batch was refused: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
            }
          },
          { count: Math.ceil(count / BATCH), concurrency: 4 },
        );

      await singles(Math.ceil(perPhase / 10));
      await batches(Math.ceil(perPhase / 10));
      let singleSeconds = 0;
      let batchSeconds = 0;
      for (let round = 0; round < 2; round++) {
        const s = await singles(perPhase);
        const b = await batches(perPhase);
        singleSeconds += s.seconds;
        batchSeconds += b.seconds;
        log(`round ${round + 1}: single ${Math.round(s.perSecond)} msg/s (p99 ${s.p99.toFixed(1)} ms), batch ${Math.round((Math.ceil(perPhase / BATCH) * BATCH) / b.seconds)} msg/s (p99 ${b.p99.toFixed(1)} ms a request)`);
      }
      const batchMessages = 2 * Math.ceil(perPhase / BATCH) * BATCH;
      return [
        {
          name: 'messages admitted through /api/send/batch',
          value: batchMessages / batchSeconds,
          unit: 'msg/s',
          baseline: { name: 'single transactional sends', value: (2 * perPhase) / singleSeconds },
          aim: '≥ 3× the baseline',
        },
      ];
    } finally {
      await server.stop();
      await testDb.drop();
    }
  },
};
export default bench;
