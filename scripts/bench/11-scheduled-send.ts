import { createTestDatabase } from '../../test/support/db.js';
import { spawnServer } from '../../test/support/spawn-server.js';
import { call, measureClosedLoop, percentiles, scaled, type BenchModule, prepareSendBench, BENCH_ADMIN } from './lib.js';

const p99 = (values: number[]) => percentiles([...values]).p99;

/**
 * Issue 28, scheduled sends: how late after its sendAt a scheduled message reaches the provider (p99,
 * a burst all due at one instant), next to how long after its 201 an immediate send of the same burst
 * size does (the same run's baseline: the queue-to-provider delay every send has anyway).
 */
const bench: BenchModule = {
  name: 'scheduled send',
  async run({ scale, log }) {
    const total = scaled(2_000, scale, 100);
    const concurrency = 50;
    const testDb = await createTestDatabase();
    const server = await spawnServer('all', { DATABASE_URL: testDb.url, ADMIN_EMAIL: BENCH_ADMIN.email, ADMIN_PASSWORD: BENCH_ADMIN.password });
    try {
      const base = server.baseUrl;
      const { headers } = await prepareSendBench(base, BENCH_ADMIN);
      const body = (i: number, extra: Record<string, unknown> = {}) => ({
        to: `reader${i}@example.org`, fromEmail: 'app@bench.example.com', subject: `Reminder ${i}`, html: `<p>Reminder ${i}</p>`, text: `Reminder ${i}`, ...extra,
      });
      const ids: string[] = [];
      const burst = (first: number, extra: () => Record<string, unknown>) =>
        measureClosedLoop(async (i) => {
          const res = await call(base, 'POST', '/api/send/transactional', { headers, body: body(first + i, extra()) });
          if (res.status !== 201) throw new Error(`a send was refused: ${res.status} ${JSON.stringify(res.body)}`);
          ids.push(res.body.messageLogId);
        }, { count: total, concurrency });
      /** For each of `mine`, the provider's arrival minus `from(row)` in ms, once all have arrived. */
      async function delays(mine: string[], from: (id: string) => number) {
        for (const started = Date.now(); ; ) {
          const rows = await testDb.db('sandbox_emails').whereIn('message_id', mine).select('message_id', 'created_at');
          if (rows.length === mine.length) return rows.map((r) => r.created_at.getTime() - from(r.message_id));
          if (Date.now() - started > 120_000) throw new Error(`${rows.length}/${mine.length} reached the provider`);
          await new Promise((r) => setTimeout(r, 100));
        }
      }

      // Baseline: immediate sends, from the moment each was answered.
      const answeredAt = new Map<string, number>();
      await measureClosedLoop(async (i) => {
        const res = await call(base, 'POST', '/api/send/transactional', { headers, body: body(i) });
        answeredAt.set(res.body.messageLogId, Date.now());
      }, { count: total, concurrency });
      const immediate = p99(await delays([...answeredAt.keys()], (id) => answeredAt.get(id)!));

      // Scheduled: the whole burst due at one instant, a few seconds after the last is accepted.
      const sendAt = new Date(Date.now() + 5_000 + total * 5).toISOString();
      const admitted = await burst(1_000_000, () => ({ sendAt }));
      log(`${total} scheduled sends accepted at ${Math.round(admitted.perSecond)}/s (p99 ${admitted.p99.toFixed(1)} ms), all due at ${sendAt}`);
      const late = await delays(ids, () => Date.parse(sendAt));
      const early = late.filter((d) => d < 0).length;
      if (early > 0) throw new Error(`${early} scheduled sends reached the provider before their sendAt`);
      log(`immediate: p99 ${immediate.toFixed(0)} ms from 201 to provider; scheduled: p99 ${p99(late).toFixed(0)} ms after sendAt, none early`);
      return [
        {
          name: 'scheduled send lateness after sendAt, p99',
          value: p99(late),
          unit: 'ms',
          baseline: { name: 'immediate send, 201 to provider p99', value: immediate },
          aim: 'within a second or two',
        },
      ];
    } finally {
      await server.stop();
      await testDb.drop();
    }
  },
};
export default bench;
