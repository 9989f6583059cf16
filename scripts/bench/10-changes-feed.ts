import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { createTestDatabase } from '../../test/support/db.js';
import { spawnServer } from '../../test/support/spawn-server.js';
import { call, measureLatency, scaled, type BenchModule, BENCH_ADMIN } from './lib.js';

/**
 * Issue 28: 1,000 (× BENCH_SCALE) long-pollers of GET /api/messages/changes held open, two per API
 * key, while sends run through those keys at a steady pace; for every event a poller received, the
 * time from the event's commit to that poller's answer. The commit is read as the event's
 * `recorded_at` (its transaction's start, so never later than the commit: the figure errs high).
 * Baseline: the same server's GET /healthz p99 in the same run. The service runs in its own process
 * (API and workers, as `npm start`); pollers and senders share this one.
 */
const bench: BenchModule = {
  name: 'changes feed',
  async run({ scale, log }) {
    const pollers = scaled(1_000, scale, 20);
    const keys = Math.ceil(pollers / 2);
    const sendsPerSecond = 100;
    const sendSeconds = 15;
    const testDb = await createTestDatabase();
    const server = await spawnServer('all', { DATABASE_URL: testDb.url, ADMIN_EMAIL: BENCH_ADMIN.email, ADMIN_PASSWORD: BENCH_ADMIN.password });
    try {
      const base = server.baseUrl;
      const login = await call(base, 'POST', '/api/auth/login', { body: BENCH_ADMIN });
      const auth = { authorization: `Bearer ${login.body.token}` };
      await call(base, 'PATCH', '/api/settings', { headers: auth, body: { dailySendCap: 100_000_000 } });
      await call(base, 'POST', '/api/domains', { headers: auth, body: { domain: 'bench.example.com' } });
      const keyHeaders: Record<string, string>[] = [];
      let t = performance.now();
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (keyHeaders.length < keys) {
            const key = await call(base, 'POST', '/api/api-keys', { headers: auth, body: { name: 'bench', scopes: ['send', 'read_events'] } });
            if (key.status !== 201) throw new Error(`key: ${key.status} ${JSON.stringify(key.body)}`);
            keyHeaders.push({ 'x-api-key': key.body.key });
          }
        }),
      );
      log(`${keys} API keys in ${((performance.now() - t) / 1000).toFixed(1)} s`);

      const healthz = await measureLatency(() => call(base, 'GET', '/healthz'), 300);
      log(`baseline GET /healthz (no pollers): p50 ${healthz.p50.toFixed(2)} ms, p99 ${healthz.p99.toFixed(2)} ms`);

      // Every poller starts at its key's head, then long-polls from there until the sends are over.
      const received: { eventId: string; at: number; poller: number }[] = [];
      let polls = 0;
      let stopAt = Infinity;
      let held = 0;
      const poll = async (headers: Record<string, string>, poller: number) => {
        const first = await call(base, 'GET', '/api/messages/changes', { headers });
        if (first.status !== 200) throw new Error(`changes: ${first.status} ${JSON.stringify(first.body)}`);
        let cursor: string = first.body.nextCursor;
        held++;
        for (;;) {
          const left = Math.ceil((stopAt - Date.now()) / 1000);
          if (left <= 0) return;
          const res = await call(base, 'GET', `/api/messages/changes?after=${cursor}&wait=${Math.min(30, left)}`, { headers });
          const at = Date.now();
          polls++;
          if (res.status !== 200) throw new Error(`changes: ${res.status} ${JSON.stringify(res.body)}`);
          for (const item of res.body.items) received.push({ eventId: item.id, at, poller });
          cursor = res.body.nextCursor;
        }
      };
      const pollerLoops = Array.from({ length: pollers }, (_, i) => poll(keyHeaders[i % keys], i));
      while (held < pollers) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 500)); // the last ones' long polls in flight
      const held99 = await measureLatency(() => call(base, 'GET', '/healthz'), 300);
      log(`${pollers} long-polls held open; GET /healthz meanwhile: p50 ${held99.p50.toFixed(2)} ms, p99 ${held99.p99.toFixed(2)} ms`);

      // Open loop: sends at a steady pace, whatever the answers' latency, round-robin over the keys.
      const measureFrom = Date.now();
      stopAt = measureFrom + (sendSeconds + 5) * 1000;
      let sent = 0;
      // Where the time goes: how far the read model trails the log (the newest projected event's age).
      const projectionLag: number[] = [];
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          const { rows } = await testDb.db.raw(
            `SELECT (extract(epoch FROM clock_timestamp() - e.recorded_at) * 1000)::float8 AS ms FROM events e
             JOIN (SELECT commit_pos, prepare_pos FROM message_changes ORDER BY commit_pos DESC, prepare_pos DESC LIMIT 1) c
             ON e.tx_id = c.commit_pos::text::xid8 AND e.global_position = c.prepare_pos`,
          );
          if (rows[0]) projectionLag.push(Number(rows[0].ms));
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
      // The answers are timestamped on this process's one event loop, which also runs the pollers and
      // the sender: how late it ran is part of every figure below.
      const loopDelay = monitorEventLoopDelay({ resolution: 10 });
      loopDelay.enable();
      const sends: Promise<void>[] = [];
      t = performance.now();
      const total = sendsPerSecond * sendSeconds;
      for (let i = 0; i < total; i++) {
        const due = t + (i * 1000) / sendsPerSecond;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        sends.push(
          call(base, 'POST', '/api/send/transactional', {
            headers: keyHeaders[(i * 7) % keys],
            body: { to: `reader${i}@example.org`, fromEmail: 'app@bench.example.com', subject: `Order ${i}`, html: `<p>Order ${i}</p>`, text: `Order ${i}` },
          }).then((res) => {
            if (res.status !== 201) throw new Error(`send: ${res.status} ${JSON.stringify(res.body)}`);
            sent++;
          }),
        );
      }
      await Promise.all(sends);
      sampling = false;
      await sampler;
      const sendRate = sent / ((performance.now() - t) / 1000);
      await Promise.all(pollerLoops);
      loopDelay.disable();

      const recorded = new Map<string, number>(
        (
          await testDb.db.raw(`SELECT event_id::text AS id, (extract(epoch FROM recorded_at) * 1000)::float8 AS ms FROM events WHERE event_id = ANY(?::uuid[])`, [
            [...new Set(received.map((r) => r.eventId))],
          ])
        ).rows.map((r: any) => [r.id, Number(r.ms)]),
      );
      const lags = received.filter((r) => (recorded.get(r.eventId) ?? 0) >= measureFrom).map((r) => r.at - recorded.get(r.eventId)!);
      lags.sort((a, b) => a - b);
      const at = (q: number) => lags[Math.min(lags.length - 1, Math.floor(q * lags.length))] ?? NaN;
      const repeats = received.length - new Set(received.map((r) => `${r.poller}:${r.eventId}`)).size;
      if (repeats > 0) throw new Error(`${repeats} events reached the same poller twice`);
      const expected = sent * 2 * (pollers / keys); // queued + sent, each to both pollers of its key
      log(
        `${sent} sends at ${sendRate.toFixed(0)}/s; ${polls} long-poll answers; ${lags.length} event deliveries to pollers (${expected} expected: queued and sent, to both pollers of each key); commit → poller answer p50 ${at(0.5).toFixed(1)} ms, p99 ${at(0.99).toFixed(1)} ms, max ${at(1).toFixed(1)} ms`,
      );
      projectionLag.sort((a, b) => a - b);
      const lagAt = (q: number) => projectionLag[Math.min(projectionLag.length - 1, Math.floor(q * projectionLag.length))] ?? NaN;
      // the histogram holds the intervals between its 10 ms timer's runs: lateness is what exceeds 10 ms
      const late = (ns: number) => Math.max(0, ns / 1e6 - 10).toFixed(1);
      log(`this process's event loop ran late by p50 ${late(loopDelay.percentile(50))} ms, p99 ${late(loopDelay.percentile(99))} ms, max ${late(loopDelay.max)} ms`);
      log(`read model trails the log (age of the newest projected event, sampled every 100 ms): p50 ${lagAt(0.5).toFixed(1)} ms, p99 ${lagAt(0.99).toFixed(1)} ms`);
      return [
        { name: `commit → long-poller answer p99 (${pollers} pollers held, ${sendsPerSecond} sends/s)`, value: at(0.99), unit: 'ms', baseline: { name: 'GET /healthz p99 with the pollers held', value: held99.p99 }, aim: '< 200 ms' },
        { name: 'commit → long-poller answer p50', value: at(0.5), unit: 'ms' },
      ];
    } finally {
      await server.stop();
      await testDb.drop();
    }
  },
};
export default bench;
