import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { bullMq, pgBoss, skipUnlessAvailable, type QueueUnderTest } from '../support/crash-queues.js';
import { onJsonLines } from '../support/json-lines.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { eventually, readyToSend, switchProvider, type IdentityChecker } from '../support/email-setup.js';
import { sesEnv, startFakeSes, type FakeSes } from '../support/fake-ses.js';
import { postmarkEnv, startFakePostmark, type FakePostmark } from '../support/fake-postmark.js';
import { sesEvent } from '../support/provider-events-payloads.js';
import { signedSnsNotification, startSnsCertServer, type SnsCertServer } from '../support/sns-signing.js';
import { startApiOnly, webhookEnv } from '../support/webhook-service.js';
import type { TestApp } from '../support/app.js';
import type { QueueSpec } from '../adapters/queue/queue-spec.js';
import { sleep } from '../adapters/queue/wait.js';

/** how long a send in doubt waits for the provider to show the lost run's send (short here; 60 s by default) */
const SEARCH_SETTLE_MS = 2_000;
const SES_SEND_SETTLE_MS = 10_000;
/** the side-effect lease a dead worker's heartbeat leaves (SIDE_EFFECT_LEASE_MS: 15 s by default, short here) */
const LEASE_MS = 4_000;
/** a dead worker's sends are taken over within this of its death */
const TAKEOVER_WITHIN_MS = 30_000;

const fixture = fileURLToPath(new URL('./fixtures/send-worker.ts', import.meta.url));
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

interface JobReport {
  event: 'job' | 'job-done';
  id: string;
  attempt: number;
  data: { sideEffectId: string; messageId: string };
}

/** A worker-role process from fixtures/send-worker.ts; `crash` makes it SIGKILL itself before appending ProviderAccepted. */
async function spawnSendWorker(env: Record<string, string>, options: { spec: QueueSpec; crash: boolean }) {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture, JSON.stringify({ ...options, sweepIntervalMs: 250 })], {
    cwd: repoRoot,
    // The queue is the spec's; REDIS_URL would only open an unused connection in openInfrastructure.
    env: { ...process.env, ...env, REDIS_URL: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const jobs: JobReport[] = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const ready = new Promise<void>((resolve, reject) => {
    onJsonLines(child.stdout!, (message, line) => {
      output += `${line}\n`;
      if (message.event === 'ready') resolve();
      else jobs.push(message);
    });
    child.stderr!.on('data', (chunk) => (output += chunk));
    void exited.then(({ code, signal }) => reject(new Error(`send worker exited (${code ?? signal}) before it was ready\n${output}`)));
  });
  await Promise.race([ready, sleep(30_000).then(() => Promise.reject(new Error(`send worker not ready within 30 s\n${output}`)))]);
  const alive = () => child.exitCode === null && child.signalCode === null;
  return {
    jobs,
    exited,
    alive,
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
type SendWorker = Awaited<ReturnType<typeof spawnSendWorker>>;

interface ProviderUnderTest {
  kind: 'sandbox' | 'ses' | 'postmark';
  /** environment for the service processes; runs before any of them starts */
  setUp(database: TestDatabase): Promise<Record<string, string>>;
  /** wires the provider to the running API, for providers that report to it */
  connect?(api: Api): void;
  /** send calls the provider received for our message id */
  calls(database: TestDatabase, messageId: string): Promise<number>;
  /** the ids the provider answered for our message id, in order */
  answered(database: TestDatabase, messageId: string): Promise<string[]>;
  /** whether the provider's own report of the first send reaches the stream before any worker looks (SES Send events) */
  reportsSends: boolean;
  /** whether the provider ends up sending the message twice (no lookup, no report: at-least-once) */
  sendsTwice: boolean;
  /** where its identities are said to pass their checks (the fake SES) */
  identities?(): IdentityChecker | undefined;
  tearDown(): Promise<void>;
}
type Api = Awaited<ReturnType<typeof startApiOnly>>;

const sandbox: ProviderUnderTest = {
  kind: 'sandbox',
  // The sandbox's ON CONFLICT DO NOTHING leaves one row however often it is called; a BEFORE INSERT
  // trigger still fires for a conflicting row, so it counts the calls the rows alone would hide.
  async setUp(database) {
    await database.db.raw(`
      CREATE TABLE sandbox_send_calls (message_id text NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp());
      CREATE FUNCTION count_sandbox_send() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO sandbox_send_calls (message_id) VALUES (NEW.message_id);
        RETURN NEW;
      END $$;
      CREATE TRIGGER count_sandbox_send BEFORE INSERT ON sandbox_emails FOR EACH ROW EXECUTE FUNCTION count_sandbox_send();`);
    return { PROVIDER_SEARCH_SETTLE_MS: String(SEARCH_SETTLE_MS) };
  },
  calls: async (database, id) => Number((await database.db('sandbox_send_calls').where({ message_id: id }).count({ n: '*' }))[0].n),
  answered: async (database, id) => (await database.db('sandbox_send_calls').where({ message_id: id })).map(() => `sandbox-${id}`),
  reportsSends: false,
  sendsTwice: false,
  async tearDown() {},
};

const taggedWith = (id: string) => (s: { body: any }) => s.body.EmailTags.some((t: any) => t.Name === 'msg_id' && t.Value === id);

/**
 * SES, with or without configuration-set event publishing of Send events to our SNS endpoint;
 * `sendEventDelayMs` holds each Send event back that long (SNS delivering late).
 */
function fakeSes(publishesSendEvents: boolean, sendEventDelayMs = 0): ProviderUnderTest {
  let ses: FakeSes | undefined;
  let certs: SnsCertServer | undefined;
  return {
    kind: 'ses',
    identities: () => ses,
    async setUp() {
      ses = await startFakeSes();
      certs = await startSnsCertServer();
      // sesEnv puts the SDK's credentials in process.env, which the worker processes inherit.
      return { ...sesEnv(ses), SNS_CERT_URL_PATTERN: certs.pattern.source, SES_SEND_EVENTS: String(publishesSendEvents), SES_SEND_SETTLE_MS: String(SES_SEND_SETTLE_MS) };
    },
    connect(api) {
      if (!publishesSendEvents) return;
      ses!.onSend = ({ body, messageId }) => {
        const msgId = body.EmailTags.find((t: any) => t.Name === 'msg_id').Value;
        const event = sesEvent('Send', { msgId, sesMessageId: messageId, recipients: body.Destination.ToAddresses });
        void sleep(sendEventDelayMs).then(() =>
          fetch(`${api.baseUrl}/api/provider-events/ses`, {
            method: 'POST',
            headers: { 'content-type': 'text/plain; charset=UTF-8' },
            body: JSON.stringify(signedSnsNotification(event, { certUrl: certs!.certUrl })),
          }),
        );
      };
    },
    calls: async (_database, id) => ses!.requests.filter((r) => r.path === '/v2/email/outbound-emails' && taggedWith(id)(r)).length,
    answered: async (_database, id) => ses!.sent.filter(taggedWith(id)).map((s) => s.messageId),
    reportsSends: publishesSendEvents && sendEventDelayMs === 0,
    sendsTwice: !publishesSendEvents,
    async tearDown() {
      await ses?.close();
      await certs?.close();
    },
  };
}

function fakePostmark(): ProviderUnderTest {
  let postmark: FakePostmark | undefined;
  const ours = (id: string) => postmark!.sent.filter((s) => s.body.Metadata?.msg_id === id);
  return {
    kind: 'postmark',
    async setUp() {
      postmark = await startFakePostmark();
      return { ...postmarkEnv(postmark), PROVIDER_SEARCH_SETTLE_MS: String(SEARCH_SETTLE_MS) };
    },
    calls: async (_database, id) => postmark!.requests.filter((r) => r.path === '/email' && r.body?.Metadata?.msg_id === id).length,
    answered: async (_database, id) => ours(id).map((s) => s.messageId),
    reportsSends: false,
    sendsTwice: false,
    async tearDown() {
      await postmark?.close();
    },
  };
}

const cases: { provider: ProviderUnderTest; queue: QueueUnderTest; title: string }[] = [
  {
    provider: sandbox,
    queue: pgBoss,
    title: 'sandbox: within 30 s, the fresh worker finds the first send in the sandbox and records it; one call',
  },
  {
    provider: sandbox,
    queue: bullMq,
    title: 'sandbox: within 30 s, the fresh worker finds the first send in the sandbox and records it; one call',
  },
  {
    provider: fakePostmark(),
    queue: pgBoss,
    title: 'Postmark: within 30 s and the search\'s settle period, the fresh worker finds the first send by its msg_id in Postmark\'s message search; one call',
  },
  {
    provider: fakeSes(true),
    queue: pgBoss,
    title: 'SES publishing Send events: SES\'s Send event (through SNS) records the first send; the fresh worker finds it on the stream; one call',
  },
  {
    provider: fakeSes(true, LEASE_MS + 3_000),
    queue: pgBoss,
    title: 'SES publishing Send events, the Send event late: the fresh worker takes the send over, waits for the Send event, which records the first send; one call',
  },
  {
    provider: fakeSes(false),
    queue: pgBoss,
    title: 'SES without Send events, at-least-once: no lookup exists, so SES receives the message TWICE; the stream records ProviderAccepted once, with the second send\'s id',
  },
];

for (const { provider, queue, title } of cases) {
  describe(`send worker SIGKILLed after the provider accepted, before ProviderAccepted was appended (${provider.kind}, ${queue.name})`, function () {
    this.timeout(90_000);
    let database: TestDatabase;
    let spec: QueueSpec;
    let env: Record<string, string>;
    const stops: (() => Promise<void>)[] = [];

    before(async function () {
      await skipUnlessAvailable(queue, this);
      database = await createTestDatabase();
      spec = queue.spec(database);
      env = webhookEnv(database.url, { ...(await provider.setUp(database)), SIDE_EFFECT_LEASE_MS: String(LEASE_MS) });
    });
    after(async () => {
      for (const stop of stops.reverse()) await stop().catch(() => {});
      await provider.tearDown();
      if (spec) await queue.dispose(spec);
      await database?.drop();
    });

    it(title, async () => {
      const first: SendWorker = await spawnSendWorker(env, { spec, crash: true });
      stops.push(first.stop);
      const api = await startApiOnly(env);
      stops.push(api.close);
      provider.connect?.(api);
      const { key, from } = await readyToSend(api as TestApp);
      if (provider.kind !== 'sandbox') {
        expect((await switchProvider(api as TestApp, provider.kind, { token: api.adminToken, ses: provider.identities?.() })).emailProvider).to.equal(provider.kind);
      }
      const res = await api.request('POST', '/api/send/transactional', {
        headers: { 'x-api-key': key },
        body: { to: 'reader@example.org', fromEmail: from, subject: 'crash', text: 'crash', html: '<p>crash</p>' },
      });
      expect(res.status).to.equal(201);
      const id: string = res.body.messageLogId;
      const effectId = `send:${id}`;
      const stream = async () => (await api.infra.eventStore.readStream(`message-${id}`)).map((e) => e.type);
      const effect = () => database.db('side_effects').where({ id: effectId }).first('status', database.db.raw('claimed_until > now() AS leased'));
      const forThis = (w: SendWorker, event: JobReport['event']) => w.jobs.filter((j) => j.event === event && j.data.sideEffectId === effectId);
      // what the stream holds while the dead worker's lease lasts: SES's Send event, where published, records the first send
      const meanwhile = provider.reportsSends ? ['EmailQueued', 'ProviderAccepted'] : ['EmailQueued'];

      // The process died of its own SIGKILL inside the send job, with the provider's acceptance in hand.
      const died = await Promise.race([first.exited, sleep(20_000).then(() => null)]);
      expect(died, `the crashing worker did not die\n${first.output()}`).to.deep.equal({ code: null, signal: 'SIGKILL' });
      expect(forThis(first, 'job')).to.have.length(1);
      expect(forThis(first, 'job-done')).to.have.length(0);
      expect(await provider.calls(database, id), 'the provider accepted the message before the kill').to.equal(1);
      const [firstId] = await provider.answered(database, id);
      await eventually(stream, (types) => types.length === meanwhile.length);
      expect(await stream()).to.deep.equal(meanwhile);
      expect(await effect()).to.deep.equal({ status: 'running', leased: true });

      // A fresh worker. The queue may give it the lost job at once, but the dead worker's lease holds
      // until its heartbeat has been missing for a lease; then the sweeper hands the send over.
      const diedAt = Date.now();
      const second = await spawnSendWorker(env, { spec, crash: false });
      stops.push(second.stop);
      const settle = provider.kind === 'ses' ? (provider.reportsSends || provider.sendsTwice ? 0 : SES_SEND_SETTLE_MS) : SEARCH_SETTLE_MS;

      const m = await eventually(
        () => api.request('GET', `/api/messages/${id}`, { token: api.adminToken }),
        (r) => r.body?.status === 'sent',
        TAKEOVER_WITHIN_MS + settle + 5_000,
      ).catch((err) => {
        throw new Error(`${err.message}\nfresh worker:\n${second.output()}`);
      });
      await eventually(effect, (e) => e?.status === 'done', TAKEOVER_WITHIN_MS + settle);
      expect(Date.now() - diedAt, 'taken over and settled within 30 s (plus the settle period)').to.be.lessThan(TAKEOVER_WITHIN_MS + settle);
      const history = await api.infra.eventStore.readStream(`message-${id}`);
      expect(history.map((e) => e.type)).to.deep.equal(['EmailQueued', 'ProviderAccepted']);
      expect(m.body.providerMessageId).to.equal(history[1].data.providerMessageId);
      expect(m.body.provider).to.equal(provider.kind);
      expect(await effect()).to.deep.equal({ status: 'done', leased: null });
      const answered = await provider.answered(database, id);
      if (provider.sendsTwice) {
        // Two distinct messages went out; the one we record is the second, the first one's id is known to no one here.
        expect(await provider.calls(database, id), 'the provider was called again after the restart').to.equal(2);
        expect(answered).to.have.length(2).and.to.have.property('1', history[1].data.providerMessageId);
      } else {
        expect(await provider.calls(database, id), 'the provider was called once in all').to.equal(1);
        expect(answered).to.deep.equal([firstId]);
        expect(history[1].data.providerMessageId, 'the first send is the one recorded').to.equal(firstId);
      }

      // Nothing more comes of the killed worker's leftovers.
      await sleep(1_000);
      expect(await provider.calls(database, id)).to.equal(provider.sendsTwice ? 2 : 1);
      expect(await stream()).to.deep.equal(['EmailQueued', 'ProviderAccepted']);
    });
  });
}
