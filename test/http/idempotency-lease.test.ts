import { expect } from 'chai';
import pg from 'pg';
import { CLAIM_LEASE_MS, IN_PROGRESS_MESSAGE } from '../../src/domain/idempotency/record.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { readyToSend } from '../support/email-setup.js';
import { spawnServer, type SpawnedServer } from '../support/spawn-server.js';

const PATH = '/api/send/transactional';

/**
 * An Idempotency-Key's claim is a lease its request renews while it runs: a request cut off with its
 * API process frees its key within about a lease (its client's retry is then done, once), and a live
 * request that runs for longer than a lease keeps its key (never two holders at once).
 */
describe('Idempotency-Key claims: a lease renewed while the request runs', function () {
  this.timeout(120_000);
  let app: TestApp;
  let key: string;
  let from: string;
  let victim: SpawnedServer | undefined;
  let n = 0;
  const fresh = () => `lease-${++n}-${Date.now()}`;
  const body = (subject: string) => ({ to: 'reader@example.org', fromEmail: from, subject, html: '<p>Hello</p>', text: 'Hello' });

  before(async () => {
    app = await startTestApp();
    ({ key, from } = await readyToSend(app));
  });
  after(async () => {
    victim?.process.kill('SIGKILL');
    await app?.close();
  });

  /** Holds appends to the event log (reads go on): a request that reaches its append waits there. */
  async function holdAppends() {
    const client = new pg.Client({ connectionString: app.infra.databaseUrl });
    await client.connect();
    await client.query('BEGIN');
    await client.query('LOCK TABLE events IN EXCLUSIVE MODE');
    return {
      async release() {
        await client.query('ROLLBACK');
        await client.end();
      },
    };
  }
  /** until a request with `k` has claimed its key and waits for the held append */
  async function waitingAfterClaim(k: string) {
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      const claimed = await app.infra.db('idempotency_keys').where({ key: k, status: 'in_flight' }).first();
      const { rows } = await app.infra.db.raw("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%append_events%'");
      if (claimed && Number(rows[0].n) > 0) return;
    }
    const { rows } = await app.infra.db.raw("SELECT state, wait_event_type, wait_event, left(query, 300) AS q FROM pg_stat_activity WHERE datname = current_database() AND state <> 'idle'");
    const claims = await app.infra.db('idempotency_keys').where({ key: k });
    throw new Error(`the request did not reach its append: ${JSON.stringify(rows)} ${JSON.stringify(claims)}`);
  }
  const send = (k: string, subject: string, base = app.baseUrl, signal?: AbortSignal) =>
    fetch(base + PATH, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key, 'idempotency-key': k }, body: JSON.stringify(body(subject)), signal }).then(async (res) => ({
      status: res.status,
      body: await res.json(),
      replayed: res.headers.get('idempotent-replayed'),
    }));
  const queuedOf = async (id: string) => Number((await app.infra.db('events').where({ stream_id: `message-${id}`, type: 'EmailQueued' }).count({ n: '*' }).first())!.n);

  it('a request whose API process was SIGKILLed mid-request: its retry is answered 409 until the lease ends, then done once', async () => {
    victim = await spawnServer('api', { DATABASE_URL: app.infra.databaseUrl }, { unset: ['REDIS_URL'], startTimeoutMs: 60_000 });
    const k = fresh();
    const held = await holdAppends();
    let killedAt: number;
    try {
      const cutOff = send(k, 'Cut off', victim.baseUrl).catch((err: unknown) => err);
      await waitingAfterClaim(k);
      victim.process.kill('SIGKILL');
      await victim.exited;
      killedAt = Date.now();
      expect(await cutOff).to.be.instanceOf(Error);
    } finally {
      await held.release();
    }

    const answers: { status: number; body: any; replayed: string | null }[] = [];
    for (let r = await send(k, 'Cut off'); ; r = await send(k, 'Cut off')) {
      answers.push(r);
      if (r.status !== 409 || Date.now() - killedAt > CLAIM_LEASE_MS + 20_000) break;
      await new Promise((res) => setTimeout(res, 250));
    }
    const done = answers.at(-1)!;
    const tookOverAfter = Date.now() - killedAt;
    expect(done.status, JSON.stringify(answers.slice(-3))).to.equal(201);
    expect(answers.slice(0, -1).every((a) => a.status === 409 && a.body.message === IN_PROGRESS_MESSAGE), JSON.stringify(answers)).to.equal(true);
    expect(tookOverAfter, 'the key was freed within about a lease of its process dying').to.be.below(CLAIM_LEASE_MS + 10_000);
    expect(done.replayed).to.equal(null);
    expect(await queuedOf(done.body.messageLogId)).to.equal(1);
    const again = await send(k, 'Cut off');
    expect([again.status, again.replayed, again.body.messageLogId]).to.deep.equal([201, 'true', done.body.messageLogId]);
    expect(await queuedOf(done.body.messageLogId)).to.equal(1);
  });

  it('a live request that runs for longer than a lease keeps its key: retries meanwhile are 409, then the replay', async () => {
    const k = fresh();
    const held = await holdAppends();
    let first: Promise<{ status: number; body: any; replayed: string | null }>;
    const meanwhile: number[] = [];
    try {
      first = send(k, 'Slow');
      await waitingAfterClaim(k);
      const since = Date.now();
      while (Date.now() - since < CLAIM_LEASE_MS + 4_000) {
        // a retry that took the key over would wait for the held append too: cut short, it counts as 0
        meanwhile.push((await send(k, 'Slow', app.baseUrl, AbortSignal.timeout(3_000)).catch(() => ({ status: 0 }))).status);
        await new Promise((res) => setTimeout(res, 500));
      }
    } finally {
      await held.release();
    }
    const answer = await first;
    expect(answer.status, JSON.stringify(answer.body)).to.equal(201);
    expect(meanwhile.length).to.be.greaterThan(0);
    expect([...new Set(meanwhile)]).to.deep.equal([409]);
    expect(await queuedOf(answer.body.messageLogId)).to.equal(1);
    let replay = await send(k, 'Slow');
    // the record is completed just after the answer
    for (let i = 0; replay.status === 409 && i < 40; i++) replay = await new Promise((res) => setTimeout(res, 250)).then(() => send(k, 'Slow'));
    expect([replay.status, replay.replayed, replay.body.messageLogId]).to.deep.equal([201, 'true', answer.body.messageLogId]);
  });
});
