import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestApp } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { eventually, readyToSend } from '../support/email-setup.js';
import { onJsonLines } from '../support/json-lines.js';
import { startApiOnly, webhookEnv } from '../support/webhook-service.js';
import { sleep } from '../adapters/queue/wait.js';
import type { QueueSpec } from '../adapters/queue/queue-spec.js';
import { bullMq, pgBoss, skipUnlessAvailable } from '../support/crash-queues.js';

const fixture = fileURLToPath(new URL('./fixtures/campaign-worker.ts', import.meta.url));
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** A worker-role process from fixtures/campaign-worker.ts; with `crashAfter` it SIGKILLs itself at that campaign message. */
async function spawnCampaignWorker(env: Record<string, string>, spec: QueueSpec, crashAfter: number | null) {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture, JSON.stringify({ spec, crashAfter, sweepIntervalMs: 250 })], {
    cwd: repoRoot,
    env: { ...process.env, ...env, REDIS_URL: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const ready = new Promise<void>((resolve, reject) => {
    onJsonLines(child.stdout!, (message, line) => {
      output += `${line}\n`;
      if (message.event === 'ready') resolve();
    });
    child.stderr!.on('data', (chunk) => (output += chunk));
    void exited.then(({ code, signal }) => reject(new Error(`campaign worker exited (${code ?? signal}) before it was ready\n${output}`)));
  });
  await Promise.race([ready, sleep(60_000).then(() => Promise.reject(new Error(`campaign worker not ready within 60 s\n${output}`)))]);
  const alive = () => child.exitCode === null && child.signalCode === null;
  return {
    exited,
    output: () => output,
    async stop() {
      if (!alive()) return;
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(10_000)]);
      if (alive()) child.kill('SIGKILL');
      await exited;
    },
  };
}

/**
 * 10,000 contacts on one queue; the other queue's run proves the same on 2,000, which keeps the suite's
 * time down (CRASH_CONTACTS sets both).
 */
const contactsFor = (queue: { name: string }) => Number(process.env.CRASH_CONTACTS ?? (queue === pgBoss ? 10_000 : 2_000));
const DIE_WITHIN_MS = 120_000;
/** the dead worker's leases end this long after it died (SIDE_EFFECT_LEASE_MS, 15 s by default) */
const LEASE_MS = 4_000;

for (const queue of [pgBoss, bullMq]) describe(`campaign fan-out: a worker SIGKILLed mid-fan-out of ${contactsFor(queue)} contacts, then two workers (${queue.name})`, function () {
  const CONTACTS = contactsFor(queue);
  this.timeout(300_000);
  let database: TestDatabase;
  let spec: QueueSpec;
  const stops: (() => Promise<void>)[] = [];

  before(async function () {
    await skipUnlessAvailable(queue, this);
    database = await createTestDatabase();
    spec = queue.spec(database);
    // The sandbox's ON CONFLICT DO NOTHING keeps one row however often it is called; a BEFORE INSERT
    // trigger still fires for a conflicting row, so it counts every provider call.
    await database.db.raw(`
      CREATE TABLE sandbox_send_calls (message_id text NOT NULL);
      CREATE FUNCTION count_sandbox_send() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO sandbox_send_calls (message_id) VALUES (NEW.message_id);
        RETURN NEW;
      END $$;`);
  });
  after(async () => {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    if (spec) await queue.dispose(spec);
    await database?.drop();
  });

  it('every contact gets exactly one message, and the provider is called once for each', async () => {
    const env = webhookEnv(database.url, { SIDE_EFFECT_LEASE_MS: String(LEASE_MS) });
    const first = await spawnCampaignWorker(env, spec, Math.floor(CONTACTS * 0.3));
    stops.push(first.stop);
    const api = await startApiOnly(env);
    stops.push(api.close);
    // the sandbox table exists once the first worker has migrated the database
    await database.db.raw('CREATE TRIGGER count_sandbox_send BEFORE INSERT ON sandbox_emails FOR EACH ROW EXECUTE FUNCTION count_sandbox_send()');
    const { from } = await readyToSend(api as TestApp);
    const token = api.adminToken;
    expect((await api.request('PATCH', '/api/settings', { token, body: { dailySendCap: 2 * CONTACTS } })).status).to.equal(200);
    for (let i = 0; i < CONTACTS; i += 5_000) {
      const contacts = Array.from({ length: Math.min(5_000, CONTACTS - i) }, (_, j) => ({ email: `c${i + j}@example.org`, firstName: `C${i + j}` }));
      const res = await api.request('POST', '/api/contacts/import', { token, body: { contacts, listId: 'all' } });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
    }
    const template = await api.request('POST', '/api/templates', { token, body: { name: 't', subject: 'Hi {{firstName}}', html: '<p>{{firstName}} {{promo}}</p>', text: '{{firstName}}' } });
    const created = await api.request('POST', '/api/campaigns', { token, body: { name: 'Crash', templateId: template.body.id, fromEmail: from, audience: { listId: 'all' } } });
    expect(created.status).to.equal(201);
    const id: string = created.body.id;
    expect((await api.request('POST', `/api/campaigns/${id}/send`, { token, body: {} })).status).to.equal(202);

    const died = await Promise.race([first.exited, sleep(DIE_WITHIN_MS).then(() => null)]);
    const state = async () => JSON.stringify({ campaign: (await api.request('GET', `/api/campaigns/${id}`, { token })).body, effects: await database.db('side_effects').where('kind', 'campaign.fanout') });
    expect(died, `the worker did not die mid-fan-out\n${first.output()}\n${await state()}`).to.deep.equal({ code: null, signal: 'SIGKILL' });
    const before = (await api.request('GET', `/api/campaigns/${id}`, { token })).body;
    expect(before.status).to.equal('sending');
    expect(before.progress.queued).to.be.below(CONTACTS);

    // The dead worker's leases (the fan-out's and its provider calls') end unrenewed; the fresh workers'
    // sweepers then hand their effects on.
    const [second, third] = await Promise.all([spawnCampaignWorker(env, spec, null), spawnCampaignWorker(env, spec, null)]);
    stops.push(second.stop, third.stop);

    const done = await eventually(() => api.request('GET', `/api/campaigns/${id}`, { token }), (r) => r.body.status === 'sent', 180_000);
    // nobody fills {{promo}}: the messages the dead worker queued without recording them count too
    expect(done.body.progress).to.deep.include({ audience: CONTACTS, queued: CONTACTS, skipped: 0, unfilledPlaceholders: CONTACTS });
    // the messages read model follows the log on its own, a little behind the campaign's
    const perRecipient = await eventually(
      () => database.db('messages').where({ campaign_id: id }).select('to_address').count({ n: '*' }).groupBy('to_address'),
      (rows) => rows.length >= CONTACTS,
      60_000,
    );
    expect(perRecipient).to.have.length(CONTACTS);
    expect(perRecipient.filter((r) => Number(r.n) !== 1)).to.deep.equal([]);

    const calls = async () => {
      const row = await database.db('sandbox_send_calls').select(database.db.raw('count(*)::int AS calls, count(DISTINCT message_id)::int AS messages')).first();
      return row as { calls: number; messages: number };
    };
    await eventually(calls, (c) => c.messages === CONTACTS, 180_000);
    await sleep(1_000);
    expect(await calls()).to.deep.equal({ calls: CONTACTS, messages: CONTACTS });
  });
});
