import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { createTestDatabase } from '../../test/support/db.js';
import { spawnServer } from '../../test/support/spawn-server.js';
import { call, scaled, type BenchModule, prepareSendBench } from './lib.js';

const ADMIN = { email: 'admin@localhost', password: 'bench-password-123' };

function percentile(samples: number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

/**
 * The client sending 1 MB attachments, on a thread of its own: building and writing a 1.4 MB request
 * holds its event loop for 15-20 ms (most of it the socket write over loopback), and on the plain
 * clients' loop that stall was timed as the service's latency. Plain JavaScript: a worker thread does
 * not inherit the TypeScript loader. Each message `{ until }` (epoch ms) sends one request at a time
 * until then and answers with how many were accepted.
 */
const ATTACHMENT_CLIENT = `
const { parentPort, workerData } = require('node:worker_threads');
const { url, headers, rest } = workerData;
let n = 0;
parentPort.on('message', async ({ until }) => {
  let accepted = 0;
  try {
    while (Date.now() < until) {
      const res = await fetch(url, { method: 'POST', headers, body: '{"to":"attached' + n++ + '@example.org",' + rest });
      const text = await res.text();
      if (res.status !== 201) throw new Error('a 1 MB send was refused: ' + res.status + ' ' + text.slice(0, 300));
      accepted++;
    }
    parentPort.postMessage({ accepted });
  } catch (err) {
    parentPort.postMessage({ error: String(err && err.message || err) });
  }
});
`;

/**
 * Issue 28: sends without attachments, with and without a client sending 1 MB attachments beside
 * them (sandbox provider, the service in its own process). Windows alternate (plain alone, plain with
 * the attachment client, ...) so the machine's drift weighs on both alike; the figure is the plain
 * sends' rate and p99 with the attachment client running, against the same sends alone.
 */
const bench: BenchModule = {
  name: 'attachments beside plain sends',
  async run({ scale, log }) {
    const rounds = Math.max(2, Math.round(scaled(8, scale, 2)));
    const windowMs = Math.max(1_000, Math.round(3_000 * Math.min(1, scale * 10)));
    const concurrency = 50;
    const testDb = await createTestDatabase();
    const env = { DATABASE_URL: testDb.url, ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password };
    const server = await spawnServer('all', env);
    try {
      const base = server.baseUrl;
      const { headers } = await prepareSendBench(base, ADMIN);
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
      const sideWindow = (until: number) =>
        new Promise<number>((resolve, reject) => {
          attachmentClient.once('message', (m: { accepted?: number; error?: string }) => (m.error ? reject(new Error(m.error)) : resolve(m.accepted!)));
          attachmentClient.postMessage({ until });
        });
      const send = async (b: Record<string, unknown>) => {
        const res = await call(base, 'POST', '/api/send/transactional', { headers, body: b });
        if (res.status !== 201) throw new Error(`a send was refused: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
      };

      let n = 0;
      /** plain sends from `concurrency` clients for `ms`, optionally with one client sending 1 MB attachments meanwhile */
      async function window(ms: number, beside: boolean) {
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
        const side = beside ? sideWindow(Date.now() + ms).then((accepted) => (attached = accepted)) : Promise.resolve();
        const start = performance.now();
        await Promise.all(plain);
        const seconds = (performance.now() - start) / 1000;
        await side;
        return { latencies, count: latencies.length, seconds, attached };
      }

      await window(2_000, true); // warm-up of both paths, not counted
      const alone = { latencies: [] as number[], count: 0, seconds: 0 };
      const beside = { latencies: [] as number[], count: 0, seconds: 0, attached: 0 };
      for (let round = 0; round < rounds; round++) {
        const a = await window(windowMs, false);
        const b = await window(windowMs, true);
        alone.latencies.push(...a.latencies), (alone.count += a.count), (alone.seconds += a.seconds);
        beside.latencies.push(...b.latencies), (beside.count += b.count), (beside.seconds += b.seconds), (beside.attached += b.attached);
      }
      await attachmentClient.terminate();
      const aloneRate = alone.count / alone.seconds;
      const besideRate = beside.count / beside.seconds;
      log(`${rounds} interleaved pairs of ${windowMs} ms windows, ${concurrency} plain clients`);
      log(`plain alone: ${Math.round(aloneRate)}/s, p99 ${percentile(alone.latencies, 0.99).toFixed(1)} ms`);
      log(`plain beside 1 MB sends: ${Math.round(besideRate)}/s, p99 ${percentile(beside.latencies, 0.99).toFixed(1)} ms; ${beside.attached} 1 MB sends accepted (${(beside.attached / beside.seconds).toFixed(1)}/s)`);
      return [
        { name: 'plain sends beside 1 MB attachment sends', value: besideRate, unit: 'req/s', baseline: { name: 'plain sends alone', value: aloneRate }, aim: 'ratio ≥ 0.9' },
        {
          name: 'plain send p99 beside 1 MB attachment sends',
          value: percentile(beside.latencies, 0.99),
          unit: 'ms',
          baseline: { name: 'plain send p99 alone', value: percentile(alone.latencies, 0.99) },
          aim: 'ratio ≤ 1.1',
        },
      ];
    } finally {
      await server.stop();
      await testDb.drop();
    }
  },
};
export default bench;
