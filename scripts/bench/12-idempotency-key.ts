import { createTestDatabase } from '../../test/support/db.js';
import { spawnServer } from '../../test/support/spawn-server.js';
import { call, measureClosedLoop, orderConfirmation, prepareSendBench, scaled, type BenchModule, BENCH_ADMIN, median } from './lib.js';

/**
 * Issue 28: what an Idempotency-Key costs a transactional send (the key's record is claimed before the
 * send and completed after it: two statements more). Sends with a fresh key each and sends without one,
 * from the same 50 clients to the same server (API and workers, as `npm start`), measured in interleaved
 * rounds (which goes first alternates) so that the machine's drift falls on both alike; the figure is
 * the median of the rounds' p99s, the baseline the same for sends without a key.
 */
const bench: BenchModule = {
  name: 'idempotency key',
  async run({ scale, log }) {
    const perRound = scaled(4_000, scale, 200);
    const rounds = 6;
    const concurrency = 50;
    const testDb = await createTestDatabase();
    const env = { DATABASE_URL: testDb.url, ADMIN_EMAIL: BENCH_ADMIN.email, ADMIN_PASSWORD: BENCH_ADMIN.password };
    const server = await spawnServer('all', env);
    try {
      const base = server.baseUrl;
      const { headers: keyHeaders } = await prepareSendBench(base, BENCH_ADMIN);
      let next = 0;
      const sendMany = (withKey: boolean) =>
        measureClosedLoop(
          async () => {
            const i = next++;
            const headers = withKey ? { ...keyHeaders, 'idempotency-key': `order-${i}` } : keyHeaders;
            const res = await call(base, 'POST', '/api/send/transactional', { headers, body: orderConfirmation(i) });
            if (res.status !== 201) throw new Error(`a send was refused: ${res.status} ${JSON.stringify(res.body)}`);
          },
          { count: perRound, concurrency },
        );

      // warm-up of both paths, not counted
      await sendMany(false);
      await sendMany(true);

      const plain: number[] = [];
      const keyed: number[] = [];
      for (let r = 0; r < rounds; r++) {
        const order = r % 2 === 0 ? [false, true] : [true, false];
        for (const withKey of order) (withKey ? keyed : plain).push((await sendMany(withKey)).p99);
      }
      const ratios = keyed.map((k, r) => k / plain[r]);
      log(`p99 per round without a key: ${plain.map((x) => x.toFixed(1)).join(', ')} ms`);
      log(`p99 per round with a key:    ${keyed.map((x) => x.toFixed(1)).join(', ')} ms`);
      log(`with/without per round: ${ratios.map((x) => x.toFixed(2)).join(', ')} (run-to-run spread of the pairs)`);
      return [
        {
          name: 'send p99 with an Idempotency-Key',
          value: median(keyed),
          unit: 'ms',
          baseline: { name: 'send p99 without one', value: median(plain) },
          aim: '≤ 1.10× the baseline',
        },
      ];
    } finally {
      await server.stop();
      await testDb.drop();
    }
  },
};
export default bench;
