import { expect } from 'chai';
import { DATABASE_UNAVAILABLE } from '../../src/http/error-mapping.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually, readyToSend } from '../support/email-setup.js';
import { untilSent } from '../support/messages-http.js';
import { terminateEveryConnection } from '../support/postgres-faults.js';

describe('the database going away while requests run', function () {
  this.timeout(90_000);
  let app: TestApp;
  let sender: { key: string; from: string };

  before(async () => {
    // A send whose run was cut off by the outage is in doubt until the sandbox's table is asked; soon here
    app = await startTestApp({ PROVIDER_SEARCH_SETTLE_MS: '1000' });
    sender = await readyToSend(app);
  });
  after(async () => {
    await app?.close();
  });

  const send = (to: string) =>
    app.request('POST', '/api/send/transactional', { apiKey: sender.key, body: { to, fromEmail: sender.from, subject: 'Hi', html: '<p>Hi</p>', text: 'Hi' } });

  it('answers 503 with a clear message, never 500, and serves, sends and projects again once the connections are back', async () => {
    const answers: { status: number; body: unknown }[] = [];
    let running = true;
    let n = 0;
    const loops = Array.from({ length: 8 }, async (_, loop) => {
      while (running) {
        const i = n++;
        const res =
          loop % 3 === 0
            ? await send(`outage-${i}@example.net`)
            : loop % 3 === 1
              ? await app.request('GET', '/api/messages?limit=5', { token: app.adminToken })
              : await app.request('GET', '/api/suppressions', { token: app.adminToken });
        answers.push({ status: res.status, body: res.body });
      }
    });
    let terminated = 0;
    for (let round = 0; round < 6; round++) {
      await new Promise((r) => setTimeout(r, 250));
      terminated += await terminateEveryConnection(app.infra.databaseUrl);
    }
    await new Promise((r) => setTimeout(r, 250));
    running = false;
    await Promise.all(loops);

    expect(terminated).to.be.greaterThan(0);
    const failures = answers.filter((a) => a.status >= 500);
    expect(failures.filter((a) => a.status !== 503)).to.deep.equal([]);
    expect(failures.length, 'some request was cut off by a terminated connection').to.be.greaterThan(0);
    for (const failure of failures) {
      expect(failure.body).to.deep.include({ error: 'Service Unavailable', statusCode: 503 });
      expect([DATABASE_UNAVAILABLE, 'the suppressions read model is not up to date yet; is a worker running?']).to.include((failure.body as { message: string }).message);
    }
    expect(answers.filter((a) => a.status === 200 || a.status === 201).length).to.be.greaterThan(0);

    // Back: the API answers, the worker's projections catch up (read-your-writes) and sends go out.
    const sent = await eventually(() => send('after-outage@example.net'), (r) => r.status === 201, 20_000);
    await untilSent(app, [sent.body.messageLogId]);
    const suppressed = await eventually(
      () => app.request('POST', '/api/suppressions', { token: app.adminToken, body: { email: 'after-outage@example.net' } }),
      (r) => r.status !== 503,
      20_000,
    );
    expect(suppressed.status, JSON.stringify(suppressed.body)).to.equal(201);
    // Every send the API accepted during the outage goes out too: one whose run was cut off after its
    // claim is taken over once the claim's lease (15 s) has ended.
    const accepted = answers.filter((a) => a.status === 201).map((a) => (a.body as { messageLogId: string }).messageLogId);
    await eventually(
      () => app.infra.db('messages').whereIn('id', accepted).where('status', 'queued').pluck('id'),
      (queued) => queued.length === 0,
      40_000,
    ).catch(async (err) => {
      const q = await app.infra.db('messages').whereIn('id', accepted).where('status', 'queued').pluck('id');
      const rows = await app.infra.db('side_effects').whereIn('id', q.map((id: string) => `send:${id}`));
      const streams = await Promise.all(q.map((id: string) => app.infra.eventStore.readStream(`message-${id}`)));
      const jobs = await app.infra.db
        .raw(`SELECT state, retry_count, created_on, started_on, completed_on, now() AS now FROM pgboss.job WHERE data->>'sideEffectId' = ANY(?)`, [q.map((id: string) => `send:${id}`)])
        .then((r) => r.rows)
        .catch((e) => String(e));
      throw new Error(`${err.message}\nside effects: ${JSON.stringify(rows)}\nstreams: ${JSON.stringify(streams.map((s) => s.map((e) => e.type)))}\njobs: ${JSON.stringify(jobs)}`);
    });
  });
});
