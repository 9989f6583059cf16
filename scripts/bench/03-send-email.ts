import { performance } from 'node:perf_hooks';
import { createTestDatabase } from '../../test/support/db.js';
import { spawnServer } from '../../test/support/spawn-server.js';
import { call, measureRate, scaled, type BenchModule } from './lib.js';

const ADMIN = { email: 'admin@localhost', password: 'bench-password-123' };

/**
 * Issue 4: accepted transactional sends per second and their p99 latency (sandbox provider, 50
 * concurrent clients), next to the same server's /healthz rate, and how long after the last 201 every
 * send had reached the provider (a row in sandbox_emails). The service runs in its own process (API
 * and workers, as `npm start`), so the load generator does not share its event loop.
 */
const bench: BenchModule = {
  name: 'transactional send',
  async run({ scale, log }) {
    const total = scaled(20_000, scale, 200);
    const concurrency = 50;
    const testDb = await createTestDatabase();
    const server = await spawnServer('all', { DATABASE_URL: testDb.url, ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password });
    try {
      const base = server.baseUrl;
      const login = await call(base, 'POST', '/api/auth/login', { body: ADMIN });
      const auth = { authorization: `Bearer ${login.body.token}` };
      await call(base, 'PATCH', '/api/settings', { headers: auth, body: { dailySendCap: 100_000_000 } });
      const domain = await call(base, 'POST', '/api/domains', { headers: auth, body: { domain: 'bench.example.com' } });
      if (domain.status !== 201) throw new Error(`domain: ${domain.status} ${JSON.stringify(domain.body)}`);
      const key = await call(base, 'POST', '/api/api-keys', { headers: auth, body: { name: 'bench', scopes: ['send'] } });
      const headers = { 'x-api-key': key.body.key as string };
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

      const healthz = await measureRate(() => call(base, 'GET', '/healthz'), { concurrency, durationMs: 3_000 });
      log(`/healthz: ${Math.round(healthz)} req/s`);

      // warm-up, not counted
      await Promise.all(Array.from({ length: 200 }, (_, i) => call(base, 'POST', '/api/send/transactional', { headers, body: body(-2 - i) })));

      const latencies: number[] = [];
      let accepted = 0;
      let refused = 0;
      let next = 0;
      let lastCreatedAt = 0;
      const start = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          for (let i = next++; i < total; i = next++) {
            const t = performance.now();
            const res = await call(base, 'POST', '/api/send/transactional', { headers, body: body(i) });
            const now = performance.now();
            latencies.push(now - t);
            if (res.status === 201) {
              accepted++;
              lastCreatedAt = Math.max(lastCreatedAt, now);
            } else refused++;
          }
        }),
      );
      const seconds = (performance.now() - start) / 1000;
      latencies.sort((a, b) => a - b);
      const p = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
      log(`${accepted} accepted, ${refused} refused in ${seconds.toFixed(1)} s; p50 ${p(0.5).toFixed(1)} ms, p99 ${p(0.99).toFixed(1)} ms`);

      // Every accepted send (plus probe and warm-up) must reach the provider.
      const expected = accepted + 201;
      let atProvider = 0;
      for (;;) {
        atProvider = Number((await testDb.db('sandbox_emails').count({ n: '*' }).first())!.n);
        if (atProvider >= expected) break;
        if (performance.now() - lastCreatedAt > 120_000) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const drainSeconds = (performance.now() - lastCreatedAt) / 1000;
      log(`${atProvider}/${expected} at the provider ${drainSeconds.toFixed(1)} s after the last 201`);
      if (refused > 0) throw new Error(`${refused} sends were refused`);

      return [
        { name: 'accepted sends', value: accepted / seconds, unit: 'req/s', baseline: { name: '/healthz', value: healthz }, aim: '≥ 1,500/s' },
        { name: 'send p99 latency', value: p(0.99), unit: 'ms', aim: '< 50 ms' },
        { name: 'all sends at the provider after the last 201', value: atProvider >= expected ? drainSeconds : Number.POSITIVE_INFINITY, unit: 's', aim: '≤ 10 s' },
      ];
    } finally {
      await server.stop();
      await testDb.drop();
    }
  },
};
export default bench;
