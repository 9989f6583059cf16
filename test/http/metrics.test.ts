import { expect } from 'chai';
import { logFollower } from '../../src/projections/lag.js';
import { templatesProjection } from '../../src/projections/templates.js';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createDb } from '../../src/adapters/db/knex.js';
import { createPostgresEventStore } from '../../src/adapters/eventstore/postgres-event-store.js';
import { createApp } from '../../src/http/app.js';
import { createReadinessRoutes } from '../../src/http/routes/health.js';
import { createLogger } from '../../src/logger.js';
import { createObservability } from '../../src/observability.js';
import type { JobQueue } from '../../src/ports/job-queue.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually, readyToSend } from '../support/email-setup.js';
import { sesEnv, startFakeSes, type FakeSes } from '../support/fake-ses.js';
import { startScriptedReceiver, type ScriptedReceiver } from '../support/webhook-receiver.js';
import { freePort } from '../support/spawn-server.js';

/** The value of one series in a Prometheus text exposition (0 when absent). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = (match[2] ?? '').split(',');
    if (wanted.every((w) => have.includes(w))) return Number(match[3]);
  }
  return 0;
}

describe('GET /metrics (no METRICS_TOKEN)', function () {
  this.timeout(60_000);
  let app: TestApp;
  const scrape = async () => {
    const res = await fetch(`${app.baseUrl}/metrics`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
    return res.text();
  };
  before(async () => {
    app = await startTestApp();
  });
  after(async () => app?.close());

  it('counts HTTP requests by route pattern (not the raw path), method and status', async () => {
    await app.request('GET', '/api/messages/some-id-1', { token: app.adminToken });
    await app.request('GET', '/api/messages/some-id-2', { token: app.adminToken });
    await app.request('GET', '/no/such/route');
    const text = await scrape();
    expect(sample(text, 'courier_http_request_duration_seconds_count', { method: 'GET', route: '/api/messages/:id', status: '404' })).to.equal(2);
    expect(sample(text, 'courier_http_request_duration_seconds_count', { method: 'GET', route: 'unmatched', status: '404' })).to.be.at.least(1);
    expect(text).not.to.include('some-id-1');
  });

  it('counts a send accepted, a send refused by its reason, and the provider call that follows', async () => {
    const { key, from } = await readyToSend(app);
    const before = await scrape();
    const send = (to: string) => app.request('POST', '/api/send/transactional', { apiKey: key, body: { to, fromEmail: from, subject: 'Hi', html: '<p>Hello</p>', text: 'Hello' } });
    const first = await send('reader@example.org');
    expect(first.status, JSON.stringify(first.body)).to.equal(201);
    expect((await app.request('POST', '/api/suppressions', { token: app.adminToken, body: { email: 'blocked@example.org' } })).status).to.equal(201);
    expect((await send('blocked@example.org')).status).to.equal(400);
    expect((await app.request('POST', '/api/send/transactional', { apiKey: key, body: { to: 'x@example.org', fromEmail: 'me@unverified.example', subject: 'Hi', html: '<p>x</p>', text: 'x' } })).status).to.equal(400);

    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>) => sample(after, name, labels) - sample(before, name, labels);
    expect(delta('courier_messages_accepted_total', { channel: 'email' })).to.equal(1);
    expect(delta('courier_messages_refused_total', { channel: 'email', reason: 'suppressed' })).to.equal(1);
    expect(delta('courier_messages_refused_total', { channel: 'email', reason: 'unverified_sender' })).to.equal(1);
    const called = await eventually(scrape, (t) => sample(t, 'courier_provider_call_duration_seconds_count', { provider: 'sandbox', outcome: 'accepted' }) >= 1);
    expect(sample(called, 'courier_provider_call_duration_seconds_sum', { provider: 'sandbox', outcome: 'accepted' })).to.be.above(0);
  });

  it("counts a campaign's messages as accepted, as the fan-out queues them", async () => {
    const { from } = await readyToSend(app);
    const token = app.adminToken;
    const contacts = ['one', 'two', 'three'].map((name) => ({ email: `${name}@campaign-metrics.example`, tags: ['metrics'] }));
    expect((await app.request('POST', '/api/contacts/import', { token, body: { contacts } })).status).to.equal(200);
    const template = await app.request('POST', '/api/templates', { token, body: { name: 'metrics', subject: 'Hi', html: '<p>Hi</p>', text: 'Hi' } });
    const campaign = await app.request('POST', '/api/campaigns', { token, body: { name: 'Counted', templateId: template.body.id, fromEmail: from, audience: { tag: 'metrics' } } });
    expect(campaign.status, JSON.stringify(campaign.body)).to.equal(201);
    const before = await scrape();
    expect((await app.request('POST', `/api/campaigns/${campaign.body.id}/send`, { token, body: {} })).status).to.equal(202);
    await eventually(() => app.request('GET', `/api/campaigns/${campaign.body.id}`, { token }), (r) => r.body.status === 'sent');
    const after = await scrape();
    const accepted = (t: string) => sample(t, 'courier_messages_accepted_total', { channel: 'email' });
    expect(accepted(after) - accepted(before)).to.equal(3);
  });

  it('/metrics, /readyz and /api/audit are in /openapi.json with examples', async () => {
    const doc = (await app.request('GET', '/openapi.json')).body;
    expect(doc.paths['/metrics'].get.responses['200'].content['text/plain; version=0.0.4'].schema.example).to.include('courier_messages_accepted_total');
    expect(doc.paths['/readyz'].get.responses['503'].content['application/json'].schema.example).to.include({ status: 'unready' });
    const audit = doc.paths['/api/audit'].get;
    expect(audit.responses['200'].content['application/json'].schema.example.items[0]).to.include.keys('at', 'actor', 'ip', 'action', 'target', 'changes');
    expect(audit.parameters.map((p: any) => p.name)).to.have.members(['cursor', 'limit', 'action', 'actor', 'target', 'from', 'to']);
    for (const p of audit.parameters) expect(p.schema.example ?? p.example, p.name).to.not.equal(undefined);
  });

  it('the Grafana dashboard in docs/ reads only series the service exposes', async () => {
    const { readFile } = await import('node:fs/promises');
    const dashboard = await readFile(new URL('../../docs/grafana-dashboard.json', import.meta.url), 'utf8');
    const used = new Set([...dashboard.matchAll(/courier_[a-z_]+/g)].map(([name]) => name.replace(/_(bucket|count|sum)$/, '')));
    expect(used.size).to.be.at.least(7);
    const text = await scrape();
    for (const name of used) expect(text, name).to.include(`# TYPE ${name} `);
  });

  it('reports the lag of every read model and process manager, and the depth of the queues', async () => {
    const text = await eventually(scrape, (t) => t.includes('courier_log_follower_lag_events{kind="process_manager",name="send-messages"}'));
    for (const name of ['messages', 'accounts', 'audit']) expect(text).to.include(`courier_log_follower_lag_events{kind="projection",name="${name}"}`);
    expect(text).to.match(/^courier_queue_depth\{queue="provider\.send"\} \d+$/m);
    expect(text).to.match(/^courier_queue_depth\{queue="webhook\.deliver"\} \d+$/m);
  });
});

describe('GET /metrics: provider calls and webhook attempts by outcome', function () {
  this.timeout(60_000);
  let app: TestApp;
  let ses: FakeSes;
  let receiver: ScriptedReceiver;
  const scrape = async () => (await fetch(`${app.baseUrl}/metrics`)).text();
  before(async () => {
    ses = await startFakeSes();
    receiver = await startScriptedReceiver([500, 200]);
    app = await startTestApp({ ...sesEnv(ses), PROVIDER_RETRY_DELAYS_MS: '100', WEBHOOK_RETRY_DELAYS_MS: '100' });
    expect((await app.request('PATCH', '/api/settings', { token: app.adminToken, body: { emailProvider: 'ses' } })).status).to.equal(200);
  });
  after(async () => {
    await app?.close();
    await ses?.close();
    await receiver?.close();
  });

  it('a provider call to try again, one refused for good and one accepted are each counted under their outcome', async () => {
    const domain = await app.request('POST', '/api/domains', { token: app.adminToken, body: { domain: 'metrics.example.com' } });
    ses.setIdentity('metrics.example.com', { dkim: 'SUCCESS', mailFrom: 'SUCCESS' });
    expect((await app.request('POST', `/api/domains/${domain.body.id}/verify`, { token: app.adminToken })).body.verified).to.equal(true);
    const { key } = await app.createApiKey(['send']);
    const send = (to: string) => app.request('POST', '/api/send/transactional', { apiKey: key, body: { to, fromEmail: 'news@metrics.example.com', subject: 'Hi', html: '<p>Hi</p>', text: 'Hi' } });
    const count = (text: string, outcome: string) => sample(text, 'courier_provider_call_duration_seconds_count', { provider: 'ses', outcome });

    ses.failSends('InternalFailure', 'try again later', 1);
    expect((await send('again@example.org')).status).to.equal(201);
    await eventually(scrape, (t) => count(t, 'retry') === 1 && count(t, 'accepted') === 1);
    ses.failSends('MessageRejected', 'Email address is not verified.', 1);
    expect((await send('refused@example.org')).status).to.equal(201);
    const text = await eventually(scrape, (t) => count(t, 'failed') === 1);
    expect(count(text, 'retry')).to.equal(1);
    expect(count(text, 'accepted')).to.equal(1);
  });

  it('a webhook attempt answered 500 counts as retry, the next one delivered as delivered', async () => {
    expect((await app.request('POST', '/api/webhooks', { token: app.adminToken, body: { url: receiver.hook } })).status).to.equal(201);
    expect((await app.request('POST', '/api/suppressions', { token: app.adminToken, body: { email: 'hooked@example.org' } })).status).to.equal(201);
    const text = await eventually(scrape, (t) => sample(t, 'courier_webhook_attempts_total', { outcome: 'delivered' }) === 1);
    expect(sample(text, 'courier_webhook_attempts_total', { outcome: 'retry' })).to.equal(1);
    expect(sample(text, 'courier_webhook_attempts_total', { outcome: 'failed' })).to.equal(0);
  });
});

describe('GET /metrics with METRICS_TOKEN set', function () {
  this.timeout(60_000);
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ METRICS_TOKEN: 'scrape-secret-1' });
  });
  after(async () => app?.close());

  it('answers 401 in the error shape without the bearer token or with another, 200 with it', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: 'scrape-secret-1' }, { 'x-api-key': 'scrape-secret-1' }] as Record<string, string>[]) {
      const res = await app.request('GET', '/metrics', { headers });
      expect(res.status).to.equal(401);
      expect(res.body).to.deep.equal({ message: 'a valid metrics token is required', error: 'Unauthorized', statusCode: 401 });
    }
    const ok = await app.request('GET', '/metrics', { headers: { authorization: 'Bearer scrape-secret-1' } });
    expect(ok.status).to.equal(200);
    expect(ok.body).to.include('courier_messages_accepted_total');
    // the scheme's name in any case
    expect((await app.request('GET', '/metrics', { headers: { authorization: 'bearer scrape-secret-1' } })).status).to.equal(200);
  });
});

describe('GET /readyz', function () {
  this.timeout(60_000);
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => app?.close());

  it('→ 200 ready when the stores answer and the read models are current; /healthz is unchanged', async () => {
    const res = await eventually(() => app.request('GET', '/readyz'), (r) => r.status === 200);
    expect(res.body).to.deep.equal({
      status: 'ready',
      checks: { database: { ok: true }, eventStore: { ok: true }, queue: { ok: true }, readModels: { ok: true } },
    });
    expect((await app.request('GET', '/healthz')).body).to.deep.equal({ status: 'ok' });
  });

  it('→ 503 naming what is wrong when the database is unreachable', async () => {
    const deadUrl = `postgres://postgres@127.0.0.1:${await freePort()}/nowhere`;
    const db = createDb(deadUrl);
    const eventStore = createPostgresEventStore({ connectionString: deadUrl });
    const queue: JobQueue = { enqueue: async () => {}, work: async () => {}, close: async () => {}, depth: async () => 0 };
    const observability = createObservability({ db, eventStore, queue, logInDatabase: true });
    observability.follow({ followers: [{ kind: 'projection', name: 'messages' }], queues: ['provider.send'] });
    const probe = createApp({ routes: createReadinessRoutes(observability), authenticate: async () => undefined, logger: createLogger('silent'), baseUrl: 'http://127.0.0.1' });
    const server: Server = await new Promise((resolve) => {
      const s = probe.listen(0, '127.0.0.1', () => resolve(s));
    });
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/readyz`, { signal: AbortSignal.timeout(15_000) });
      expect(res.status).to.equal(503);
      const body = await res.json();
      expect(body.status).to.equal('unready');
      expect(body.checks.database.ok).to.equal(false);
      expect(body.checks.database.detail).to.be.a('string').and.not.equal('');
      expect(body.checks.queue).to.deep.equal({ ok: true });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await eventStore.close();
      await db.destroy();
    }
  });

  it('→ 503 when a read model is too far behind the log', async () => {
    const { READY_MAX_LAG_EVENTS } = await import('../../src/observability.js');
    const observability = createObservability({ db: app.infra.db, eventStore: app.infra.eventStore, queue: app.infra.queue, logInDatabase: true });
    // a follower that has handled nothing of a log longer than the limit
    await app.infra.eventStore.append(
      'lagtest-1',
      Array.from({ length: READY_MAX_LAG_EVENTS }, (_, i) => ({ id: crypto.randomUUID(), type: 'LagTestEvent', data: { i } })),
    );
    observability.follow({ followers: [{ kind: 'projection', name: 'never-started', streamPrefixes: ['lagtest-'] }] });
    // the appended events count once every transaction older than theirs has ended (the log's readers' rule)
    const readiness = await eventually(() => observability.readiness(), (r) => !r.ready, 30_000);
    expect(readiness.checks.readModels).to.deep.equal({ ok: false, detail: `behind the log by ${READY_MAX_LAG_EVENTS} events or more: never-started` });
  });

  it('→ 503 while a read model is of another version than this process\'s code (a release rebuilding it, or this process older than the data)', async () => {
    const observability = createObservability({ db: app.infra.db, eventStore: app.infra.eventStore, queue: app.infra.queue, logInDatabase: true });
    const live = await app.infra.db('projection_registry').where({ name: 'templates' }).first();
    // as a process of the next release sees it before its rebuild went live
    observability.follow({ followers: [logFollower('projection', { ...templatesProjection, version: live.version + 1 })] });
    const readiness = await eventually(() => observability.readiness(), (r) => !r.ready, 30_000);
    expect(readiness.checks.readModels).to.deep.equal({
      ok: false,
      detail: `read models of another version than this process's (being rebuilt for a release, or this process is older than the data): templates v${live.version}, code v${live.version + 1}`,
    });
  });

  it('→ 503 when a read model has had events waiting for 30 s without moving (no worker runs it), however few', async () => {
    const { READY_STALL_MS } = await import('../../src/observability.js');
    let now = 1_000_000;
    const observability = createObservability({ db: app.infra.db, eventStore: app.infra.eventStore, queue: app.infra.queue, logInDatabase: true, now: () => now });
    await app.infra.eventStore.append('stalltest-1', [{ id: crypto.randomUUID(), type: 'StallTestEvent', data: {} }]);
    observability.follow({ followers: [{ kind: 'projection', name: 'nobody-runs-it', streamPrefixes: ['stalltest-'] }] });
    // first seen waiting: not yet a stall
    await eventually(() => observability.readiness(), (r) => r.ready, 30_000);
    now += READY_STALL_MS - 1;
    expect((await observability.readiness()).ready).to.equal(true);
    now += 1;
    const readiness = await observability.readiness();
    expect(readiness.ready).to.equal(false);
    expect(readiness.checks.readModels).to.deep.equal({ ok: false, detail: 'not following the log for 30 s (is a worker running?): nobody-runs-it' });
  });

  it('a follower that moves on is not stalled, however long it has had events waiting; once it stops, it is', async () => {
    let now = 1_000_000;
    const observability = createObservability({ db: app.infra.db, eventStore: app.infra.eventStore, queue: app.infra.queue, logInDatabase: true, now: () => now });
    await app.infra.eventStore.append('movetest-1', [1, 2, 3].map((i) => ({ id: crypto.randomUUID(), type: 'MoveTestEvent', data: { i } })));
    const events = await app.infra.eventStore.readStream('movetest-1');
    await app.infra.db('process_manager_checkpoints').insert({ name: 'moving-pm', commit_pos: 0, prepare_pos: 0 });
    const moveTo = (k: number) => app.infra.db('process_manager_checkpoints').where({ name: 'moving-pm' }).update({ commit_pos: String(events[k].position.commit), prepare_pos: String(events[k].position.prepare) });
    observability.follow({ followers: [{ kind: 'process_manager', name: 'moving-pm', streamPrefixes: ['movetest-'] }] });
    await eventually(() => observability.readiness(), (r) => r.ready, 30_000);
    for (const k of [0, 1]) {
      now += 20_000;
      await moveTo(k);
      expect((await observability.readiness()).checks.readModels).to.deep.equal({ ok: true });
    }
    now += 30_000;
    expect((await observability.readiness()).checks.readModels.ok).to.equal(false);
  });
});

describe('the worker role on WORKER_PORT', function () {
  this.timeout(150_000);

  it('answers /readyz (its read models and process managers current) and /metrics (with its token), and nothing of the API', async () => {
    const { createTestDatabase } = await import('../support/db.js');
    const { spawnServer } = await import('../support/spawn-server.js');
    const testDb = await createTestDatabase();
    const port = await freePort();
    // the first boot (schema, account) is an API's or `npm start`'s: the worker joins a running service
    const api = await spawnServer('api', { DATABASE_URL: testDb.url, ADMIN_PASSWORD: 'bench-password-123' });
    const worker = await spawnServer('worker', { DATABASE_URL: testDb.url, WORKER_PORT: String(port), METRICS_TOKEN: 'w-token' });
    try {
      const base = `http://127.0.0.1:${port}`;
      const ready = await eventually(
        // the worker starts listening once its workers run
        () => fetch(`${base}/readyz`).then(async (r) => ({ status: r.status, body: await r.json() }), () => ({ status: 0, body: undefined })),
        (r) => r.status === 200,
        90_000,
      ).catch((err) => {
        throw new Error(`${err.message}; the worker said: ${worker.output()}`);
      });
      expect(ready.body.checks).to.include.keys('database', 'eventStore', 'queue', 'readModels');
      expect((await fetch(`${base}/metrics`)).status).to.equal(401);
      const metrics = await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer w-token' } });
      expect(metrics.status).to.equal(200);
      expect(await metrics.text()).to.include('courier_log_follower_lag_events{kind="process_manager",name="send-messages"}');
      expect((await fetch(`${base}/api/settings`)).status).to.equal(404);
    } finally {
      await worker.stop();
      await api.stop();
      await testDb.drop();
    }
  });
});
