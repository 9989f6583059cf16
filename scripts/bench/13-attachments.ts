import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { createTestDatabase } from '../../test/support/db.js';
import { spawnServer } from '../../test/support/spawn-server.js';
import { call, scaled, type BenchModule, prepareSendBench, BENCH_ADMIN } from './lib.js';

function percentile(samples: number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

/**
 * The client sending 1 MB attachments, on a thread of its own: building and writing a 1.4 MB request
 * holds its event loop for 15-20 ms (most of it the socket write over loopback), and on the plain
 * clients' loop that stall was timed as the service's latency. Plain JavaScript: a worker thread does
 * not inherit the TypeScript loader. Each message `{ until, everyMs }` (epoch ms) sends one request at
 * a time until then, each at least `everyMs` after the one before (0: back to back), and answers with
 * how many were accepted.
 */
const ATTACHMENT_CLIENT = `
const { parentPort, workerData } = require('node:worker_threads');
const { url, headers, rest } = workerData;
let n = 0;
parentPort.on('message', async ({ until, everyMs }) => {
  let accepted = 0;
  try {
    for (let next = Date.now(); next < until; next += everyMs) {
      if (next > Date.now()) await new Promise((r) => setTimeout(r, next - Date.now()));
      const res = await fetch(url, { method: 'POST', headers, body: '{"to":"attached' + n++ + '@example.org",' + rest });
      const text = await res.text();
      if (res.status !== 201) throw new Error('a 1 MB send was refused: ' + res.status + ' ' + text.slice(0, 300));
      accepted++;
      next = Math.max(next, Date.now() - everyMs);
    }
    parentPort.postMessage({ accepted });
  } catch (err) {
    parentPort.postMessage({ error: String(err && err.message || err) });
  }
});
`;

/** The paced attachment client's rate: one 1 MB send in every few hundred plain ones, as a mix of mail has them. */
const PACED_PER_SECOND = 2;

/**
 * Issue 28: sends without attachments, with and without a client sending 1 MB attachments beside
 * them (sandbox provider, the service in its own process). Windows alternate (plain alone, plain with
 * the attachment client sending back to back, plain with it paced at PACED_PER_SECOND) so the
 * machine's drift weighs on all alike; the figures are the plain sends' rate and p99 with the
 * attachment client running, against the same sends alone. Back to back, the client takes whatever
 * the service gives it (the faster the service, the more megabytes it sends), so that pair measures
 * the megabytes' cost as much as any interference; the paced pair asks what a steady trickle costs.
 */
const bench: BenchModule = {
  name: 'attachments beside plain sends',
  async run({ scale, log }) {
    const rounds = Math.max(2, Math.round(scaled(8, scale, 2)));
    const windowMs = Math.max(1_000, Math.round(3_000 * Math.min(1, scale * 10)));
    const concurrency = 50;
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
      });
      const megabyte = Buffer.alloc(1024 * 1024);
      for (let i = 0; i < megabyte.length; i++) megabyte[i] = (i * 131 + (i >> 10)) & 0xff;
      const attachments = [{ filename: 'report.pdf', content: megabyte.toString('base64'), contentType: 'application/pdf' }];
      // the attachment send's JSON after its `to`, serialised once
      const rest = JSON.stringify({ ...body(0), attachments }).replace(/^\{"to":"[^"]*",/, '');
      const attachmentClient = new Worker(ATTACHMENT_CLIENT, {
        eval: true,
        workerData: { url: `${base}/api/send/transactional`, headers: { ...headers, 'content-type': 'application/json' }, rest },
      });
      attachmentClient.unref(); // never what keeps the bench alive; terminated after the rounds
      const sideWindow = (until: number, everyMs: number) =>
        new Promise<number>((resolve, reject) => {
          attachmentClient.once('message', (m: { accepted?: number; error?: string }) => (m.error ? reject(new Error(m.error)) : resolve(m.accepted!)));
          attachmentClient.postMessage({ until, everyMs });
        });
      const send = async (b: Record<string, unknown>) => {
        const res = await call(base, 'POST', '/api/send/transactional', { headers, body: b });
        if (res.status !== 201) throw new Error(`a send was refused: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
      };

      let n = 0;
      /** plain sends from `concurrency` clients for `ms`, optionally with one client sending 1 MB attachments meanwhile, each `everyMs` after the last */
      async function window(ms: number, beside: false | { everyMs: number }) {
        const latencies: number[] = [];
        let attached = 0;
        const end = performance.now() + ms;
        const plain = Array.from({ length: concurrency }, async () => {
          while (performance.now() < end) {
            const t = performance.now();
            await send(body(n++));
            latencies.push(performance.now() - t);
          }
        });
        const side = beside ? sideWindow(Date.now() + ms, beside.everyMs).then((accepted) => (attached = accepted)) : Promise.resolve();
        const start = performance.now();
        await Promise.all(plain);
        const seconds = (performance.now() - start) / 1000;
        await side;
        return { latencies, count: latencies.length, seconds, attached };
      }

      await window(2_000, { everyMs: 0 }); // warm-up of both paths, not counted
      const tally = () => ({ latencies: [] as number[], count: 0, seconds: 0, attached: 0 });
      const alone = tally();
      const besideFull = tally();
      const besidePaced = tally();
      const add = (into: ReturnType<typeof tally>, w: Awaited<ReturnType<typeof window>>) => {
        into.latencies.push(...w.latencies);
        into.count += w.count;
        into.seconds += w.seconds;
        into.attached += w.attached;
      };
      for (let round = 0; round < rounds; round++) {
        add(alone, await window(windowMs, false));
        add(besideFull, await window(windowMs, { everyMs: 0 }));
        add(besidePaced, await window(windowMs, { everyMs: 1000 / PACED_PER_SECOND }));
      }
      await attachmentClient.terminate();
      const rate = (t: ReturnType<typeof tally>) => t.count / t.seconds;
      const p99 = (t: ReturnType<typeof tally>) => percentile(t.latencies, 0.99);
      log(`${rounds} interleaved rounds of three ${windowMs} ms windows, ${concurrency} plain clients`);
      log(`plain alone: ${Math.round(rate(alone))}/s, p99 ${p99(alone).toFixed(1)} ms`);
      for (const [what, t] of [['back to back', besideFull], [`paced at ${PACED_PER_SECOND}/s`, besidePaced]] as const) {
        log(`plain beside 1 MB sends ${what}: ${Math.round(rate(t))}/s, p99 ${p99(t).toFixed(1)} ms; ${t.attached} 1 MB sends accepted (${(t.attached / t.seconds).toFixed(1)}/s)`);
      }
      const figures = (what: string, t: ReturnType<typeof tally>) => [
        { name: `plain sends beside 1 MB attachment sends ${what}`, value: rate(t), unit: 'req/s', baseline: { name: 'plain sends alone', value: rate(alone) }, aim: 'ratio ≥ 0.9' },
        { name: `plain send p99 beside 1 MB attachment sends ${what}`, value: p99(t), unit: 'ms', baseline: { name: 'plain send p99 alone', value: p99(alone) }, aim: 'ratio ≤ 1.1' },
      ];
      return [...figures('back to back', besideFull), ...figures(`at ${PACED_PER_SECOND}/s`, besidePaced)];
    } finally {
      await server.stop();
      await testDb.drop();
    }
  },
};
export default bench;
