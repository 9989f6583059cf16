import { expect } from 'chai';
import { Agent, request } from 'node:http';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { eventually } from '../support/email-setup.js';
import { spawnServer, type SpawnedServer } from '../support/spawn-server.js';

const ADMIN = { email: 'admin@localhost', password: 'thread-test-password' };

async function call(base: string, method: string, path: string, headers: Record<string, string> = {}, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, text, body: res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined };
}

/** One series' value in a Prometheus text exposition, or undefined. */
function seriesValues(exposition: string, name: string): { labels: string; value: number }[] {
  return exposition
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .map((line) => {
      const at = line.lastIndexOf(' ');
      return { labels: line.slice(name.length, at), value: Number(line.slice(at + 1)) };
    });
}

describe('npm start (the all role): the workers on a thread of their own', function () {
  this.timeout(90_000);
  let testDb: TestDatabase;
  let server: SpawnedServer;

  before(async () => {
    testDb = await createTestDatabase({ migrate: false });
    // as users and containers run it: npm start, to which the SIGTERM test below sends its signal
    server = await spawnServer('all', { DATABASE_URL: testDb.url, ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password }, { npmScript: true });
  });
  after(async () => {
    await server?.stop();
    await testDb?.drop();
  });

  it('sends through the workers thread, and one /metrics and /readyz speak for both threads', async () => {
    const token = (await call(server.baseUrl, 'POST', '/api/auth/login', {}, ADMIN)).body.token as string;
    const auth = { authorization: `Bearer ${token}` };
    expect((await call(server.baseUrl, 'POST', '/api/domains', auth, { domain: 'thread.example.com' })).status).to.equal(201);
    const key = (await call(server.baseUrl, 'POST', '/api/api-keys', auth, { name: 'thread', scopes: ['send'] })).body.key as string;
    const sent = await call(server.baseUrl, 'POST', '/api/send/transactional', { 'x-api-key': key }, {
      to: 'reader@example.org', fromEmail: 'app@thread.example.com', subject: 'Hello', html: '<p>Hello</p>', text: 'Hello',
    });
    expect(sent.status, sent.text).to.equal(201);
    const message = await eventually(() => call(server.baseUrl, 'GET', `/api/messages/${sent.body.messageLogId}`, auth), (m) => m.body.status === 'sent', 30_000);
    expect(message.body.status).to.equal('sent');

    const metrics = (await call(server.baseUrl, 'GET', '/metrics')).text;
    // accepted by the API's thread, sent by the workers' thread: both in the one exposition
    expect(seriesValues(metrics, 'courier_messages_accepted_total')).to.deep.equal([{ labels: '{channel="email"}', value: 1 }]);
    expect(seriesValues(metrics, 'courier_provider_call_duration_seconds_count').map((s) => s.value)).to.deep.equal([1]);
    // the lag both threads read from the database is shown once per follower, not summed
    const lag = seriesValues(metrics, 'courier_log_follower_lag_events');
    expect(lag.map((s) => s.labels)).to.include('{kind="process_manager",name="send-messages"}');
    expect(new Set(lag.map((s) => s.labels)).size).to.equal(lag.length);
    // the process's own series once (the main thread's), not one per thread
    expect(seriesValues(metrics, 'courier_process_start_time_seconds')).to.have.length(1);

    const ready = await call(server.baseUrl, 'GET', '/readyz');
    expect(ready.status, ready.text).to.equal(200);
  });

  it('stops both threads and exits 0 on a SIGTERM sent to npm alone (a container stop: npm passes it on, tsx relays it), also while keep-alive connections are in use back to back', async () => {
    // a load balancer's way: four connections kept alive, each reused as soon as its answer is read
    const agent = new Agent({ keepAlive: true, maxSockets: 4 });
    const get = () =>
      new Promise<void>((resolve, reject) => {
        const req = request(`${server.baseUrl}/healthz`, { agent }, (res) => res.resume().on('end', resolve));
        req.on('error', reject);
        req.end();
      });
    // each client stops at its first refused or reset request
    const clients = Array.from({ length: 4 }, async () => {
      for (;;) if ((await get().then(() => true, () => false)) === false) return;
    });
    await new Promise((r) => setTimeout(r, 500));
    const signalled = Date.now();
    server.process.kill('SIGTERM');
    expect(await server.exited).to.deep.equal({ code: 0, signal: null });
    // it stopped taking requests at once, rather than answering them until its shutdown timed out (30 s)
    expect(Date.now() - signalled).to.be.below(15_000);
    await Promise.all(clients);
    agent.destroy();
    // nothing of it is left answering (a shell between npm and tsx kept the service running)
    expect(await fetch(`${server.baseUrl}/healthz`).then((r) => r.status, () => 'refused')).to.equal('refused');
  });
});
