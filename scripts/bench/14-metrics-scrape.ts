import { createTestDatabase } from '../../test/support/db.js';
import { spawnServer } from '../../test/support/spawn-server.js';
import { call, measureClosedLoop, orderConfirmation, prepareSendBench, scaled, type BenchModule, BENCH_ADMIN, median } from './lib.js';

/**
 * Issue 29: what a Prometheus scrape every second costs the send path (the send bench's ratio: accepted
 * sends/s over the same server's /healthz rate, 50 clients, API and workers in one process as
 * `npm start`). Rounds with a scraper on /metrics every second and rounds without it, interleaved
 * (which goes first alternates) so the machine's drift falls on both alike; the figure is the median
 * ratio with scraping, its baseline the median without, and the spread of the rounds without scraping
 * is logged next to the difference between the two.
 */
const bench: BenchModule = {
  name: 'metrics scrape',
  async run({ scale, log }) {
    const perRound = scaled(4_000, scale, 200);
    const rounds = 6;
    const concurrency = 50;
    const testDb = await createTestDatabase();
    const env = { DATABASE_URL: testDb.url, ADMIN_EMAIL: BENCH_ADMIN.email, ADMIN_PASSWORD: BENCH_ADMIN.password };
    const server = await spawnServer('all', env);
    try {
      const base = server.baseUrl;
      const { headers } = await prepareSendBench(base, BENCH_ADMIN);
      let next = 0;
      const sends = () =>
        measureClosedLoop(
          async () => {
            const res = await call(base, 'POST', '/api/send/transactional', { headers, body: orderConfirmation(next++) });
            if (res.status !== 201) throw new Error(`a send was refused: ${res.status} ${JSON.stringify(res.body)}`);
          },
          { count: perRound, concurrency },
        );
      const healthz = () => measureClosedLoop(() => call(base, 'GET', '/healthz'), { count: perRound, concurrency });

      let scrapes = 0;
      /** The send bench's ratio for one round, with a scraper on /metrics every second while it runs, or without. */
      async function round(scraped: boolean): Promise<number> {
        const timer = scraped
          ? setInterval(() => {
              void call(base, 'GET', '/metrics').then((res) => {
                if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
                scrapes++;
              });
            }, 1_000)
          : undefined;
        try {
          const noop = await healthz();
          const sent = await sends();
          return sent.perSecond / noop.perSecond;
        } finally {
          clearInterval(timer);
        }
      }

      // warm-up of both, not counted
      await round(false);
      await round(true);
      scrapes = 0;

      const plain: number[] = [];
      const scraped: number[] = [];
      for (let r = 0; r < rounds; r++) {
        const order = r % 2 === 0 ? [false, true] : [true, false];
        for (const withScrape of order) (withScrape ? scraped : plain).push(await round(withScrape));
      }
      const spread = Math.max(...plain) - Math.min(...plain);
      log(`sends/healthz per round without scraping: ${plain.map((x) => x.toFixed(3)).join(', ')} (spread ${spread.toFixed(3)})`);
      log(`sends/healthz per round with /metrics every second: ${scraped.map((x) => x.toFixed(3)).join(', ')} (${scrapes} scrapes)`);
      log(`difference of the medians: ${(median(scraped) - median(plain)).toFixed(3)}; aim: within the spread`);
      return [
        {
          name: 'send ratio (sends/s over /healthz req/s) with /metrics scraped every second',
          value: median(scraped),
          unit: '×',
          baseline: { name: 'the same ratio without scraping', value: median(plain) },
          aim: 'differs by less than the spread of the rounds without scraping',
        },
      ];
    } finally {
      await server.stop();
      await testDb.drop();
    }
  },
};
export default bench;
