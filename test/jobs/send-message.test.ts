import { expect } from 'chai';
import { execute } from '../../src/commands/execute.js';
import { messageDecider } from '../../src/domain/messages/message.js';
import { createSendMessageHandler } from '../../src/jobs/send-message.js';
import { createProviderRegistry } from '../../src/providers.js';
import { SEND_JOB } from '../../src/process-managers/send-messages.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually, readyToSend, switchProvider } from '../support/email-setup.js';
import { postmarkEnv, startFakePostmark, type FakePostmark } from '../support/fake-postmark.js';
import { sesEnv, startFakeSes, type FakeSes } from '../support/fake-ses.js';
import { queueDirect } from '../support/messages-http.js';

/** Provider retries a few hundred ms apart, so a transient error's retry is seen within a test. */
const FAST_RETRIES = { PROVIDER_RETRY_DELAYS_MS: '200,200,200,200,200', PROVIDER_SEARCH_SETTLE_MS: '300' };

interface ProviderUnderTest {
  kind: 'ses' | 'postmark';
  start(): Promise<{ env: Record<string, string>; close(): Promise<void> }>;
  /** provider-side records: our message id (tag / metadata) and the provider's id */
  sent(): { msgId: string; providerMessageId: string; trackingOff: boolean; html?: string }[];
  requests(): number;
  failTransient(): void;
  failPermanent(): void;
  permanentDetail: RegExp;
}

let ses: FakeSes;
let pm: FakePostmark;
const providers: ProviderUnderTest[] = [
  {
    kind: 'ses',
    async start() {
      ses = await startFakeSes();
      return { env: sesEnv(ses), close: () => ses.close() };
    },
    sent: () =>
      ses.sent.map((s) => ({
        msgId: s.body.EmailTags.find((t: any) => t.Name === 'msg_id').Value,
        providerMessageId: s.messageId,
        trackingOff: s.body.ConfigurationOverrides?.Tracking?.ClickTrackingEnabled === 'DISABLED',
        html: s.body.Content.Simple.Body.Html?.Data,
      })),
    requests: () => ses.requests.filter((r) => r.path === '/v2/email/outbound-emails').length,
    failTransient: () => ses.failSends('TooManyRequestsException', 'Maximum sending rate exceeded.'),
    failPermanent: () => ses.failSends('MessageRejected', 'Email address is not verified.'),
    permanentDetail: /^MessageRejected: Email address is not verified\.$/,
  },
  {
    kind: 'postmark',
    async start() {
      pm = await startFakePostmark();
      return { env: postmarkEnv(pm), close: () => pm.close() };
    },
    sent: () => pm.sent.map((s) => ({ msgId: s.body.Metadata.msg_id, providerMessageId: s.messageId, trackingOff: s.body.TrackLinks === 'None', html: s.body.HtmlBody })),
    requests: () => pm.requests.filter((r) => r.path === '/email').length,
    failTransient: () => pm.failSends(503, 0, 'Service unavailable'),
    failPermanent: () => pm.failSends(422, 406, 'You tried to send to recipient(s) that have been marked as inactive.'),
    permanentDetail: /406.*marked as inactive/,
  },
];

for (const p of providers) {
  describe(`send worker through ${p.kind} (fake server, real SDK)`, function () {
    this.timeout(60_000);
    let app: TestApp;
    let fake: { close(): Promise<void> };
    let key: string;
    let from: string;
    const send = (body: Record<string, unknown> = {}) =>
      app.request('POST', '/api/send/transactional', {
        apiKey: key,
        body: { to: 'reader@example.org', fromEmail: from, subject: 'Hi', html: '<p><a href="https://example.com/x">x</a></p>', text: 'Hi', ...body },
      });
    const message = (id: string) => app.request('GET', `/api/messages/${id}`, { token: app.adminToken }).then((r) => r.body);
    const settled = (id: string) => eventually(() => message(id), (m) => m?.status === 'sent' || m?.status === 'failed');

    before(async () => {
      const started = await p.start();
      fake = started;
      app = await startTestApp({ ...started.env, ...FAST_RETRIES });
      ({ key, from } = await readyToSend(app));
      expect((await switchProvider(app, p.kind, { ses: p.kind === 'ses' ? ses : undefined })).emailProvider).to.equal(p.kind);
    });
    after(async () => {
      await app?.close();
      await fake?.close();
    });

    it(`sends through ${p.kind}: the message ends sent with the provider's id, our id travels with it, provider tracking off`, async () => {
      const res = await send();
      expect(res.status).to.equal(201);
      const m = await settled(res.body.messageLogId);
      expect(m.status).to.equal('sent');
      const atProvider = p.sent().find((s) => s.msgId === res.body.messageLogId);
      expect(atProvider, 'provider received the message with our id').to.not.equal(undefined);
      expect(m.provider).to.equal(p.kind);
      expect(m.providerMessageId).to.equal(atProvider!.providerMessageId);
      expect(atProvider!.trackingOff).to.equal(true);
      expect(atProvider!.html).to.contain(`${app.baseUrl}/r/${res.body.messageLogId}?`).and.contain(`${app.baseUrl}/o/${res.body.messageLogId}`);
    });

    it('a permanent provider error ends the message failed with the provider detail, without retrying', async () => {
      const before = p.requests();
      p.failPermanent();
      const res = await send();
      const m = await settled(res.body.messageLogId);
      expect(m.status).to.equal('failed');
      expect(m.error).to.match(p.permanentDetail);
      expect(m.providerMessageId).to.equal(null);
      expect(p.requests() - before).to.equal(1);
      const history = await app.request('GET', `/api/messages/${res.body.messageLogId}/history`, { token: app.adminToken });
      expect(history.body.map((e: any) => e.type)).to.deep.equal(['EmailQueued', 'ProviderFailed']);
    });

    it('a transient provider error is retried with backoff and the message ends sent', async () => {
      const before = p.requests();
      p.failTransient();
      const res = await send();
      const m = await settled(res.body.messageLogId);
      expect(m.status).to.equal('sent');
      expect(p.requests() - before).to.equal(2);
      expect(m.providerMessageId).to.equal(p.sent().find((s) => s.msgId === res.body.messageLogId)!.providerMessageId);
      const history = await app.request('GET', `/api/messages/${res.body.messageLogId}/history`, { token: app.adminToken });
      expect(history.body.map((e: any) => e.type)).to.deep.equal(['EmailQueued', 'ProviderAttemptFailed', 'ProviderAccepted']);
    });
  });
}

/** The whole app on a fresh fake Postmark, the account set to send through it; both closed after `run`. */
async function withPostmark(run: (c: { app: TestApp; fake: FakePostmark; key: string; from: string }) => Promise<void>, env: Record<string, string> = {}) {
  const fake = await startFakePostmark();
  const app = await startTestApp({ ...postmarkEnv(fake), ...env });
  try {
    const { key, from } = await readyToSend(app);
    await switchProvider(app, 'postmark');
    await run({ app, fake, key, from });
  } finally {
    await app.close();
    await fake.close();
  }
}

/**
 * A real failure of the event store: PostgreSQL refuses the first `times` ProviderAccepted inserts (a
 * sequence is not rolled back with the failed transaction). Returns how many were tried so far.
 */
async function failAcceptedAppends(app: TestApp, times: number): Promise<() => Promise<number>> {
  await app.infra.db.raw(`
    CREATE SEQUENCE fail_accept;
    CREATE FUNCTION fail_accept() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.type = 'ProviderAccepted' AND nextval('fail_accept') <= ${times} THEN RAISE EXCEPTION 'event store down'; END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER fail_accept BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION fail_accept();`);
  return async () => {
    const { rows } = await app.infra.db.raw(`SELECT last_value, is_called FROM fail_accept`);
    return rows[0].is_called ? Number(rows[0].last_value) : 0;
  };
}

const sendOne = async (app: TestApp, key: string, from: string) => {
  const res = await app.request('POST', '/api/send/transactional', { apiKey: key, body: { to: 'r@example.org', fromEmail: from, subject: 's', text: 't', html: '<p>t</p>' } });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body.messageLogId as string;
};
const sendJob = (id: string, jobId = 'direct') => ({ id: jobId, name: SEND_JOB, attempt: 1, data: { sideEffectId: `send:${id}`, messageId: id } });
/** A send worker of another process on the app's database. */
const otherWorker = (app: TestApp) => {
  const { db, eventStore, queue, attachmentStore, privacy } = app.infra;
  // A run in doubt waits for the provider's search to settle; the test's provider answers at once.
  return createSendMessageHandler({ db, eventStore, queue, attachmentStore, personOf: privacy.personOf, searchSettleMs: 300, ...createProviderRegistry({ db, config: app.config }) });
};

describe('send worker: crashes and concurrency', function () {
  this.timeout(60_000);

  it('the result append fails after the provider accepted: recorded on a second try, the provider called once and never searched', () =>
    withPostmark(async ({ app, fake, key, from }) => {
      const tried = await failAcceptedAppends(app, 1);
      const id = await sendOne(app, key, from);
      const m = await eventually(() => app.request('GET', `/api/messages/${id}`, { token: app.adminToken }), (r) => r.body?.status === 'sent', 15_000);
      expect(await tried(), 'the append did fail, after the provider had been called').to.be.at.least(2);
      const history = await app.infra.eventStore.readStream(`message-${id}`);
      expect(history.map((e) => e.type)).to.deep.equal(['EmailQueued', 'ProviderAccepted']);
      expect(fake.requests.map((r) => r.path)).to.deep.equal(['/email']);
      expect(history[1].data.providerMessageId).to.equal(fake.sent[0].messageId);
      expect(m.body.providerMessageId).to.equal(fake.sent[0].messageId);
    }));

  it('the result append keeps failing: the lease runs to its end, and the run after it finds the send in Postmark\'s search; one call', () =>
    withPostmark(async ({ app, fake, key, from }) => {
      const { db, eventStore } = app.infra;
      const tried = await failAcceptedAppends(app, 4);
      const id = await sendOne(app, key, from);
      const effect = () => db('side_effects').where({ id: `send:${id}` }).first('status', db.raw('claimed_until > now() AS leased'));
      // four tries over ~5 s, then the worker gives up with the lease still held
      await eventually(tried, (n) => n >= 4, 15_000);
      await new Promise((r) => setTimeout(r, 1_000));
      expect(await effect()).to.deep.equal({ status: 'running', leased: true });
      expect((await eventStore.readStream(`message-${id}`)).map((e) => e.type)).to.deep.equal(['EmailQueued']);
      expect(fake.requests.map((r) => r.path)).to.deep.equal(['/email']);

      // The lease ends (5 minutes, in the test at once); the next run is in doubt and asks Postmark.
      // That run is this one, or the queue's retry of the failed job if it comes now: one of them claims
      // (either waits the search's settle period, short here, before it asks).
      await db('side_effects').where({ id: `send:${id}` }).update({ claimed_until: db.raw(`now() - interval '1 second'`) });
      await otherWorker(app)(sendJob(id));
      const history = await eventually(() => eventStore.readStream(`message-${id}`), (h) => h.length === 2);
      expect(fake.requests.map((r) => r.path)).to.deep.equal(['/email', '/messages/outbound']);
      expect(history.map((e) => e.type)).to.deep.equal(['EmailQueued', 'ProviderAccepted']);
      expect(history[1].data.providerMessageId).to.equal(fake.sent[0].messageId);
      await eventually(effect, (e) => e?.status === 'done');
    }, { PROVIDER_SEARCH_SETTLE_MS: '300' }));

  it('a retry after an error that came once Postmark had taken the message finds it in the search instead of sending again', () =>
    withPostmark(async ({ app, fake, key, from }) => {
      fake.failSends(502, 0, 'Bad Gateway', 1, { afterAccepting: true });
      const id = await sendOne(app, key, from);
      const m = await eventually(() => app.request('GET', `/api/messages/${id}`, { token: app.adminToken }), (r) => r.body?.status === 'sent');
      expect(fake.requests.map((r) => r.path)).to.deep.equal(['/email', '/messages/outbound']);
      expect(m.body.providerMessageId).to.equal(fake.sent[0].messageId);
      const history = await app.infra.eventStore.readStream(`message-${id}`);
      expect(history.map((e) => e.type)).to.deep.equal(['EmailQueued', 'ProviderAttemptFailed', 'ProviderAccepted']);
    }, FAST_RETRIES));

  it('a retry of a send Postmark may have taken (5xx) waits for its search to show it; a throttled one (429) only the retry delay', () =>
    withPostmark(async ({ app, fake, key, from }) => {
      const failedAttempt = async (id: string) => {
        // the retry may already have followed: the first attempt's event is the second of the stream
        const history = await eventually(() => app.infra.eventStore.readStream(`message-${id}`), (h) => h.length >= 2);
        expect(history.slice(0, 2).map((e) => e.type)).to.deep.equal(['EmailQueued', 'ProviderAttemptFailed']);
        const { nextAttemptAt, failedAt } = history[1].data;
        return Date.parse(nextAttemptAt) - Date.parse(failedAt);
      };
      fake.failSends(502, 0, 'Bad Gateway', 1, { afterAccepting: true });
      const taken = await sendOne(app, key, from);
      expect(await failedAttempt(taken)).to.be.within(59_000, 61_000);
      fake.failSends(429, 0, 'Rate limit exceeded');
      expect(await failedAttempt(await sendOne(app, key, from))).to.be.within(0, 1_000);
      // the first is taken once: when its retry comes, it finds it in the search (the test above)
      expect(fake.sent.filter((s) => s.body.Metadata.msg_id === taken)).to.have.length(1);
    }, { PROVIDER_RETRY_DELAYS_MS: '200,200,200,200,200' }));

  it('a send in doubt is not sent while the provider cannot say whether it has it; once it says no, it is sent', () =>
    withPostmark(async ({ app, fake }) => {
      const { db, eventStore } = app.infra;
      const accountId = (await db('accounts').where({ name: 'default' }).first('id')).id;
      const id = await queueDirect(app, { accountId, provider: 'postmark', to: 'doubt@example.org' }, { heldBySender: true });
      // the worker holding it died: its lease ran out
      await db('side_effects').where({ id: `send:${id}` }).update({ claimed_until: db.raw(`now() - interval '1 second'`) });
      const handle = otherWorker(app);
      const searches = () => fake.requests.filter((r) => r.path === '/messages/outbound').length;
      const sends = () => fake.requests.filter((r) => r.path === '/email').length;

      fake.failSearches(503, 'Service unavailable');
      const err = await handle(sendJob(id)).catch((e) => e);
      expect(err).to.be.instanceOf(Error);
      expect([searches(), sends()]).to.deep.equal([1, 0]);
      // handed on still in doubt: the queue's retry may take it at once, and asks again
      const effect = await db('side_effects').where({ id: `send:${id}` }).first('status', db.raw('claimed_until <= now() AS lease_over'));
      expect(effect).to.deep.equal({ status: 'running', lease_over: true });
      expect((await eventStore.readStream(`message-${id}`)).map((e) => e.type)).to.deep.equal(['EmailQueued']);

      await handle(sendJob(id));
      expect([searches(), sends()]).to.deep.equal([2, 1]);
      const history = await eventStore.readStream(`message-${id}`);
      expect(history.map((e) => e.type)).to.deep.equal(['EmailQueued', 'ProviderAccepted']);
      expect(history[1].data.providerMessageId).to.equal(fake.sent[0].messageId);
    }));

  it('a completion lost with PostgreSQL\'s last WAL (it does not wait for the flush): the run that takes the effect over finds ProviderAccepted and marks it done; one call, no search', () =>
    withPostmark(async ({ app, fake, key, from }) => {
      const { db } = app.infra;
      const id = await sendOne(app, key, from);
      const effect = () => db('side_effects').where({ id: `send:${id}` }).first('status');
      await eventually(effect, (e) => e?.status === 'done');
      // what a crash leaves when the claim was flushed and the completion was not: running, its lease over
      await db('side_effects').where({ id: `send:${id}` }).update({ status: 'running', done_at: null, claimed_until: db.raw(`now() - interval '1 second'`) });
      await otherWorker(app)(sendJob(id, 'after-crash'));
      expect(await effect()).to.deep.equal({ status: 'done' });
      expect(fake.requests.map((r) => r.path)).to.deep.equal(['/email']);
      const history = await app.infra.eventStore.readStream(`message-${id}`);
      expect(history.map((e) => e.type)).to.deep.equal(['EmailQueued', 'ProviderAccepted']);
    }));

  it('workers handed the same job at once call the provider once (the side-effect lease), and a late duplicate does nothing', () =>
    withPostmark(async ({ app, fake, key, from }) => {
      fake.sendDelayMs = 300; // a slow provider: the racing workers overlap its call
      const id = await sendOne(app, key, from);
      const job = sendJob(id, 'dup');
      await eventually(() => app.infra.db('side_effects').where({ id: `send:${id}` }).first(), (row) => Boolean(row));
      // more workers of another process on the same database, racing the app's own worker
      await Promise.all([otherWorker(app)(job), otherWorker(app)(job), otherWorker(app)(job)]);
      await eventually(() => app.request('GET', `/api/messages/${id}`, { token: app.adminToken }), (r) => r.body?.status === 'sent');
      await otherWorker(app)(job); // delivered again after it is done
      expect(fake.requests.filter((r) => r.path === '/email')).to.have.length(1);
      const history = await app.infra.eventStore.readStream(`message-${id}`);
      expect(history.map((e) => e.type)).to.deep.equal(['EmailQueued', 'ProviderAccepted']);
    }));

  it("the provider rate's store failing before the call gives the send back: its next run sends it without a search, not in doubt", () =>
    withPostmark(async ({ app, fake, key, from }) => {
      const { db } = app.infra;
      expect((await app.request('PATCH', '/api/settings', { token: app.adminToken, body: { providerRatePerSecond: 50 } })).status).to.equal(200);
      // the limiter's first count fails, as a store that went away would
      await db.raw(`
        CREATE SEQUENCE fail_rate;
        CREATE FUNCTION fail_rate() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.key LIKE 'provider-rate%' AND nextval('fail_rate') <= 1 THEN RAISE EXCEPTION 'rate store down'; END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER fail_rate BEFORE INSERT ON rate_limits FOR EACH ROW EXECUTE FUNCTION fail_rate();`);
      const id = await sendOne(app, key, from);
      await eventually(() => app.request('GET', `/api/messages/${id}`, { token: app.adminToken }), (r) => r.body?.status === 'sent', 30_000);
      expect((await db.raw('SELECT last_value, is_called FROM fail_rate')).rows[0]).to.deep.equal({ last_value: 2, is_called: true });
      expect(fake.requests.map((r) => r.path)).to.deep.equal(['/email']);
    }));

  it('a message queued before attachment bytes had a store of their own (the event carries them) is sent with them', () =>
    withPostmark(async ({ app, fake }) => {
      const accountId = (await app.infra.db('accounts').where({ name: 'default' }).first('id')).id;
      const report = { filename: 'report.txt', contentType: 'text/plain', contentId: null, size: 5, content: Buffer.from('hello').toString('base64') };
      const id = await queueDirect(app, { accountId, provider: 'postmark', to: 'legacy@example.org', attachments: [report] });
      const m = await eventually(() => app.request('GET', `/api/messages/${id}`, { token: app.adminToken }), (r) => r.body?.status === 'sent' || r.body?.status === 'failed');
      expect(m.body.status, JSON.stringify(m.body)).to.equal('sent');
      expect(fake.sent[0].body.Attachments).to.deep.equal([{ Name: 'report.txt', Content: report.content, ContentType: 'text/plain', ContentID: null }]);
    }));
});

describe('send worker: an SES error that may come after SES took the message', function () {
  this.timeout(60_000);
  const SETTLE_MS = 2_000;

  it('with Send events published, a retry after a 5xx waits the settle period and is settled by the Send event (one send); a throttled send waits the retry delay only', async () => {
    const fake = await startFakeSes();
    const app = await startTestApp({ ...sesEnv(fake), PROVIDER_RETRY_DELAYS_MS: '200,200,200,200,200', SES_SEND_EVENTS: 'true', SES_SEND_SETTLE_MS: String(SETTLE_MS) });
    try {
      const { key, from } = await readyToSend(app);
      await switchProvider(app, 'ses', { ses: fake });
      // SES publishes the Send event after its answer: here later than the retry delay, within the settle
      // period. Recorded as the ingest of a Send event naming our id records it.
      fake.onSend = ({ body, messageId }) => {
        const id = body.EmailTags.find((t: any) => t.Name === 'msg_id').Value;
        setTimeout(() => {
          void execute(messageDecider, { kind: 'recordOutcome', acceptedAs: { providerMessageId: messageId, at: new Date().toISOString() } }, { eventStore: app.infra.eventStore, streamId: `message-${id}` });
        }, 700);
      };
      const sendsOf = (id: string) => fake.sent.filter((s) => s.body.EmailTags.find((t: any) => t.Name === 'msg_id').Value === id);
      const failedAttemptDelay = async (id: string) => {
        const history = await eventually(() => app.infra.eventStore.readStream(`message-${id}`), (h) => h.length >= 2);
        expect(history[1].type).to.equal('ProviderAttemptFailed');
        return Date.parse(history[1].data.nextAttemptAt) - Date.parse(history[1].data.failedAt);
      };

      fake.failSends('InternalFailure', 'We encountered an internal error.', 1, { afterAccepting: true });
      const taken = await sendOne(app, key, from);
      // (the retry's time is taken a moment before the failure's)
      expect(await failedAttemptDelay(taken)).to.be.within(SETTLE_MS - 100, SETTLE_MS + 1_000);
      await new Promise((r) => setTimeout(r, SETTLE_MS + 1_000));
      expect(sendsOf(taken)).to.have.length(1);
      const history = await app.infra.eventStore.readStream(`message-${taken}`);
      expect(history.map((e) => e.type)).to.deep.equal(['EmailQueued', 'ProviderAttemptFailed', 'ProviderAccepted']);
      expect(history[2].data.providerMessageId).to.equal(sendsOf(taken)[0].messageId);

      fake.failSends('TooManyRequestsException', 'Maximum sending rate exceeded.');
      expect(await failedAttemptDelay(await sendOne(app, key, from))).to.be.within(0, 1_000);
    } finally {
      await app.close();
      await fake.close();
    }
  });
});
