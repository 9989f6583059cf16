import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createWebhookSender } from '../../src/adapters/webhooks/http-sender.js';
import { WEBHOOK_EVENTS, webhookStream } from '../../src/domain/webhooks/subscription.js';
import { signedRequest } from '../../src/adapters/webhooks/signed-request.js';
import { startTestApp } from '../../test/support/app.js';
import { measureThroughput, scaled, type BenchModule } from './lib.js';

/** A receiver that answers 200 at once and only counts. */
async function startCountingReceiver() {
  let count = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count++;
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    count: () => count,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Issue 6: webhook deliveries per second to a local receiver answering 200 at once, with a fan-out of
 * 1,000 subscriptions per suppression. Measured from the first suppression to the last request the
 * receiver got, so it covers the fan-out process manager, the queue, the signed POST and the recording
 * of each outcome. Baseline: the same signed POSTs sent from a plain loop (no queue, no event store).
 */
const bench: BenchModule = {
  name: 'webhook deliveries',
  async run({ scale, log }) {
    const subscriptions = scaled(1000, scale, 10);
    const suppressions = 3;
    const total = subscriptions * suppressions;
    const app = await startTestApp({ LOG_LEVEL: 'warn' });
    const receiver = await startCountingReceiver();
    try {
      const { db, eventStore } = app.infra;
      const accountId = (await db('accounts').first('id')).id;
      const createdAt = new Date().toISOString();
      // Subscriptions straight into the log (the API would add one read-your-writes wait each).
      await measureThroughput(subscriptions, (i) =>
        eventStore.append(webhookStream(`bench-${i}`), [
          {
            id: crypto.randomUUID(),
            type: 'WebhookSubscribed',
            data: { id: `bench-${i}`, accountId, url: receiver.url, events: [...WEBHOOK_EVENTS], secret: `whsec_bench_${i}`, createdAt },
          },
        ], { expectedRevision: 'no_stream' }),
      );
      while (Number((await db('webhooks').count('* as n'))[0].n) < subscriptions) await new Promise((r) => setTimeout(r, 50));
      log(`${subscriptions} subscriptions; ${suppressions} suppressions → ${total} deliveries`);

      const sender = createWebhookSender({ timeoutMs: 15_000, allowPrivateTargets: true });
      const body = JSON.stringify({ id: 'x', event: 'contact.suppressed', occurredAt: createdAt, accountId, data: {} });
      const baseline = await measureThroughput(total, () => sender.post({ url: receiver.url, ...signedRequest('whsec_bench', 'contact.suppressed', body, 1) }), 16);
      log(`baseline: ${total} signed POSTs from a loop in ${baseline.seconds.toFixed(2)} s`);

      const before = receiver.count();
      const start = performance.now();
      for (let i = 0; i < suppressions; i++) {
        const res = await app.request('POST', '/api/suppressions', { token: app.adminToken, body: { email: `bench${i}@example.org` } });
        if (res.status !== 201) throw new Error(`suppression: ${res.status} ${JSON.stringify(res.body)}`);
      }
      let last = performance.now();
      let seen = before;
      const deadline = Date.now() + 10 * 60_000;
      while (receiver.count() - before < total) {
        if (Date.now() > deadline) throw new Error(`only ${receiver.count() - before} of ${total} deliveries arrived`);
        await new Promise((r) => setTimeout(r, 20));
        if (receiver.count() !== seen) {
          seen = receiver.count();
          last = performance.now();
        }
      }
      const seconds = (last - start) / 1000;
      log(`${total} deliveries arrived in ${seconds.toFixed(2)} s`);
      // every delivery recorded as delivered exactly once (the read model catches up a little later)
      const extra = receiver.count() - before - total;
      if (extra !== 0) throw new Error(`${extra} deliveries more than expected`);
      return [
        {
          name: `deliveries to a local receiver (fan-out ${subscriptions})`,
          value: total / seconds,
          unit: 'deliveries/s',
          baseline: { name: 'signed POSTs from a loop, 16 at a time', value: baseline.perSecond },
          aim: '≥ 500 deliveries/s',
        },
      ];
    } finally {
      await receiver.close();
      await app.close();
    }
  },
};
export default bench;
