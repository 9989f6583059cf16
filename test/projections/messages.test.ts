import { expect } from 'chai';
import { messagesProjection } from '../../src/projections/messages.js';
import { rebuildProjection } from '../../src/projections/rebuild.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually, readyToSend } from '../support/email-setup.js';
import { queueDirect, recordOutcome, runScript, sendOne, untilSent } from '../support/messages-http.js';
import {
  accepted,
  attemptFailed,
  bounced,
  clicked,
  complained,
  delivered,
  emailQueued,
  failed,
  messagesProjectionSpec,
  opened,
  smsQueued,
} from '../support/messages-projection.js';

describe('messages projection (given events, then rows)', function () {
  this.timeout(30_000);
  let spec: Awaited<ReturnType<typeof messagesProjectionSpec>>;
  beforeEach(async () => {
    spec = await messagesProjectionSpec(messagesProjection);
  });
  afterEach(async () => spec?.drop());

  it('EmailQueued writes a queued row with the list fields; ProviderAccepted makes it sent with the provider id', async () => {
    await spec.given(['m1', [emailQueued('m1', { campaignId: 'c1', templateId: 't1' })]]);
    const queued = await spec.message('m1');
    expect(queued).to.deep.include({
      account_id: 'acc1',
      api_key_id: 'key1',
      channel: 'email',
      status: 'queued',
      from_address: 'app@example.com',
      to_address: 'ada@example.org',
      subject: 'Welcome',
      provider: 'sandbox',
      provider_message_id: null,
      campaign_id: 'c1',
      template_id: 't1',
      opens: 0,
      clicks: 0,
    });
    expect(queued.created_at.toISOString()).to.equal('2024-05-01T10:00:00.000Z');
    await spec.given(['m1', [accepted('pm-1')]]);
    const sent = await spec.message('m1');
    expect(sent).to.deep.include({ status: 'sent', provider_message_id: 'pm-1' });
    expect(sent.updated_at.getTime()).to.be.greaterThan(queued.updated_at.getTime());
    expect((await spec.timeline('m1')).map((e) => e.type)).to.deep.equal(['sent']);
  });

  it("a person's erasure redacts their rows and marks their keyed hash erased, stored or in the same batch; a message queued after it keeps it", async () => {
    const to = (person: string) => ({ metadata: { person } });
    const erased = { type: 'ContactErased', data: { accountId: 'acc1', person: 'p-ada', contactId: null, erasedAt: '2024-05-02T00:00:00.000Z' } };
    await spec.given(['m1', [{ ...emailQueued('m1'), ...to('p-ada') }]], ['m2', [{ ...emailQueued('m2', { to: 'bob@example.org' }), ...to('p-bob') }]]);
    await spec.given(['m3', [{ ...emailQueued('m3'), ...to('p-ada') }]], ['contact', [erased]], ['m4', [{ ...emailQueued('m4'), ...to('p-ada') }]]);
    for (const id of ['m1', 'm3']) expect(await spec.message(id)).to.deep.include({ to_address: null, subject: null, person: 'erased:p-ada' });
    expect(await spec.message('m2')).to.deep.include({ to_address: 'bob@example.org', person: 'p-bob' });
    expect(await spec.message('m4')).to.deep.include({ to_address: 'ada@example.org', person: 'p-ada' });
  });

  it('an erasure takes off the address or link an earlier version ended a provider event id with (as a rebuild reads it); ids of this version stay', async () => {
    const to = (person: string) => ({ metadata: { person } });
    const withId = (e: { type: string; data: Record<string, unknown> }, providerEventId: string) => ({ ...e, data: { ...e.data, providerEventId } });
    const events = [
      withId(delivered(), 'pm:delivery:pm-1:ada@example.org'),
      withId(clicked(), 'pm:click:pm-1:2024-05-01T11:00:00Z:https://example.com/a'),
      withId(opened(), 'pm:open:pm-1:2024-05-01T11:00:00Z'),
      withId(clicked(), 'pm:click:pm-1:0123456789abcdef0123456789abcdef'),
    ];
    await spec.given(['m1', [{ ...emailQueued('m1'), ...to('p-ada') }, accepted(), ...events]], ['m2', [{ ...emailQueued('m2', { to: 'bob@example.org' }), ...to('p-bob') }, withId(delivered(), 'ses:n-1:bob@example.org')]]);
    const ids = async (id: string) => (await spec.timeline(id)).filter((e) => e.type !== 'sent').map((e) => e.data.providerEventId);
    const erased = { type: 'ContactErased', data: { accountId: 'acc1', person: 'p-ada', contactId: null, erasedAt: '2024-05-02T00:00:00.000Z' } };
    await spec.given(['contact', [erased]]);
    expect(await ids('m1')).to.deep.equal(['pm:delivery:pm-1', 'pm:click:pm-1:2024-05-01T11:00:00Z', 'pm:open:pm-1:2024-05-01T11:00:00Z', 'pm:click:pm-1:0123456789abcdef0123456789abcdef']);
    expect((await spec.timeline('m1'))[2].data).to.include({ url: null, recipient: null });
    // someone else's rows are not touched
    expect(await ids('m2')).to.deep.equal(['ses:n-1:bob@example.org']);
  });

  it('sent → delivered; a hard bounce → bounced; a soft bounce leaves the status; a complaint wins over delivered', async () => {
    await spec.given(
      ['d', [emailQueued('d'), accepted(), delivered()]],
      ['hb', [emailQueued('hb'), accepted(), bounced('hard')]],
      ['sb', [emailQueued('sb'), accepted(), bounced('soft')]],
      ['c', [emailQueued('c'), accepted(), delivered()]],
    );
    await spec.given(['c', [complained()]], ['d', [opened()]]);
    const status = async (id: string) => (await spec.message(id)).status;
    expect([await status('d'), await status('hb'), await status('sb'), await status('c')]).to.deep.equal(['delivered', 'bounced', 'sent', 'complained']);
    // a late Delivered does not move a bounced message back
    await spec.given(['hb', [delivered()]]);
    expect(await status('hb')).to.equal('bounced');
    expect((await spec.timeline('sb')).map((e) => e.type)).to.deep.equal(['sent', 'bounced']);
    expect((await spec.timeline('c')).map((e) => e.type)).to.deep.equal(['sent', 'delivered', 'complained']);
  });

  it('a retried attempt keeps the message queued with the error; ProviderFailed makes it failed (no timeline entry)', async () => {
    await spec.given(['f', [emailQueued('f'), attemptFailed('timeout')]]);
    expect(await spec.message('f')).to.deep.include({ status: 'queued', error: 'timeout' });
    await spec.given(['f', [failed('550 rejected')]]);
    expect(await spec.message('f')).to.deep.include({ status: 'failed', error: '550 rejected', provider_message_id: null });
    expect(await spec.timeline('f')).to.deep.equal([]);
  });

  it('counts opens and clicks without suspected bots; opens and clicks never change the status', async () => {
    await spec.given(['o', [emailQueued('o'), accepted(), delivered(), opened(), opened(true), opened(), clicked(true)]]);
    await spec.given(['o', [clicked(), opened(true)]]);
    const row = await spec.message('o');
    expect(row).to.deep.include({ status: 'delivered', opens: 2, clicks: 1 });
    const timeline = await spec.timeline('o');
    // the timeline keeps every event, bots flagged, so an auditor still sees them
    expect(timeline.map((e) => [e.type, e.suspected_bot])).to.deep.equal([
      ['sent', false],
      ['delivered', false],
      ['opened', false],
      ['opened', true],
      ['opened', false],
      ['clicked', true],
      ['clicked', false],
      ['opened', true],
    ]);
    expect(timeline[1].occurred_at.toISOString()).to.equal('2024-05-01T11:00:00.000Z');
    expect(timeline[0].occurred_at.toISOString()).to.equal('2024-05-01T10:00:01.000Z');
    expect(timeline[6].data).to.include({ url: 'https://example.com/a', suspectedBot: false });
  });

  it('one batch and one event per batch give the same rows', async () => {
    const life = [emailQueued('x'), accepted(), delivered(), opened(), clicked(), opened(true), complained()];
    await spec.given(['x', life]);
    const other = await messagesProjectionSpec(messagesProjection);
    try {
      for (const e of life) await other.given(['x', [e]]);
      const strip = (r: Record<string, unknown>) => ({ ...r, updated_at: undefined });
      expect(strip(await other.message('x'))).to.deep.equal(strip(await spec.message('x')));
      const kinds = async (s: typeof spec) => (await s.timeline('x')).map((e) => [e.revision, e.type]);
      expect(await kinds(other)).to.deep.equal(await kinds(spec));
      expect(await spec.message('x')).to.deep.include({ status: 'complained', opens: 1, clicks: 1 });
    } finally {
      await other.drop();
    }
  });

  it('an SMS row has its sender number, segments and encoding; an outcome for an unknown message writes nothing', async () => {
    await spec.given(['s', [smsQueued('s'), accepted('sns-1'), delivered()]], ['ghost', [delivered()]]);
    expect(await spec.message('s')).to.deep.include({
      channel: 'sms',
      status: 'delivered',
      from_address: '+14155550000',
      to_address: '+14155552671',
      subject: null,
      segments: 1,
      encoding: 'gsm7',
      api_key_id: null,
    });
    expect(await spec.message('ghost')).to.equal(undefined);
    expect(await spec.timeline('ghost')).to.deep.equal([]);
  });
});

describe('messages projection rebuild (npm run projections:rebuild -- messages)', function () {
  this.timeout(90_000);
  let app: TestApp;
  let accountId: string;

  before(async () => {
    app = await startTestApp();
    const { key, from } = await readyToSend(app);
    const sent: string[] = [];
    for (let i = 0; i < 10; i++) sent.push(await sendOne(app, key, { to: `r${i}@example.org`, fromEmail: from, subject: `Hello ${i}` }));
    accountId = (await untilSent(app, sent))[0].account_id;
    // most of the read model comes straight from the event log, as a seeded account's would
    const queued: string[] = [];
    for (let i = 0; i < 110; i++) queued.push(await queueDirect(app, { accountId, campaignId: i % 2 ? 'c1' : null, to: `q${i}@example.org` }));
    const all = [...sent, ...queued];
    await untilSent(app, all);
    for (const [i, id] of all.entries()) {
      if (i % 3 === 0) await recordOutcome(app, id, 'Delivered');
      if (i % 5 === 0) await recordOutcome(app, id, 'Opened');
      if (i % 7 === 0) await recordOutcome(app, id, 'Clicked', { suspectedBot: i % 2 === 0 });
      if (i % 11 === 0) await recordOutcome(app, id, 'Bounced');
    }
    await caughtUp();
  });
  after(async () => app?.close());

  /** Until the live generation has applied every event it reads (messages'; contacts' erasures and accounts' retention cutoffs). */
  async function caughtUp() {
    const [{ n }] = await app.infra
      .db('events')
      .where((q) => q.whereLike('stream_id', 'message-%').orWhereLike('stream_id', 'contact-%').orWhereLike('stream_id', 'account-%'))
      .whereIn('type', messagesProjection.eventTypes!)
      .count('* as n');
    await eventually(
      () => app.infra.db('projection_checkpoints').where({ name: 'messages', status: 'active' }).first(),
      (cp) => Number(cp?.events) === Number(n),
    );
  }
  const snapshot = async () => ({
    messages: await app.infra.db('messages').orderBy('id'),
    events: await app.infra.db('message_events').orderBy(['message_id', 'revision']),
  });
  /** index definitions of one generation's tables, with the generation suffix taken out */
  const indexesOf = async (g: number) => {
    const { rows } = await app.infra.db.raw('SELECT indexdef FROM pg_indexes WHERE tablename IN (?, ?) ORDER BY indexname', [`messages_g${g}`, `message_events_g${g}`]);
    return rows.map((r: { indexdef: string }) => r.indexdef.replaceAll(`_g${g}`, '_g'));
  };
  const generation = async () => (await app.infra.db('projection_registry').where({ name: 'messages' }).first()).active_generation;

  it('the script builds a new generation from the event log with the same rows as the live one, and switches to it', async () => {
    const live = await snapshot();
    expect(live.messages).to.have.length(120);
    const before = await generation();
    const liveIndexes = await indexesOf(before);
    expect(liveIndexes).to.have.length(10);
    const run = await runScript(app, 'rebuild', ['messages']);
    expect(run.code, run.stderr + run.stdout).to.equal(0);
    expect(run.stdout).to.match(new RegExp(`Rebuilt messages as generation ${before + 1}: \\d+ events in [\\d.]+ s \\(\\d+ events/s\\); now live\\.`));
    expect(run.stdout).to.match(/messages: \d+\/\d+ events/); // progress, one line at a time without a terminal
    expect(await generation()).to.equal(before + 1);
    expect(await snapshot()).to.deep.equal(live);
    // the rebuild loads without the secondary indexes and builds them before the switch: all are back
    expect(await indexesOf(before + 1)).to.deep.equal(liveIndexes);
    const old = await app.infra.db.raw('SELECT to_regclass(?) AS t', [`messages_g${before}`]);
    expect(old.rows[0].t).to.equal(null);
    // the live runner follows the new generation
    const id = await queueDirect(app, { accountId, to: 'after@example.org' });
    await eventually(() => app.infra.db('messages').where({ id }).first(), (row) => row?.status === 'sent');
    await caughtUp();
  });

  it('readers of GET /api/messages never see an empty or partial table while a rebuild runs and switches', async () => {
    await caughtUp();
    const live = await snapshot();
    const total = live.messages.length;
    let rebuilding = true;
    let readsDuring = 0;
    const problems: string[] = [];
    const read = async () => {
      while (rebuilding) {
        const [page, agg] = await Promise.all([
          app.request('GET', '/api/messages?limit=100', { token: app.adminToken }),
          app.request('GET', '/api/messages/aggregate', { token: app.adminToken }),
        ]);
        if (page.status !== 200 || page.body.items.length !== 100 || page.body.nextCursor === null) problems.push(`list ${page.status} ${page.body.items?.length}`);
        if (agg.status !== 200 || agg.body.total !== total) problems.push(`aggregate ${agg.status} ${agg.body.total}`);
        if (rebuilding) readsDuring++;
      }
    };
    const readers = [read(), read(), read()];
    const before = await generation();
    const result = await rebuildProjection({ db: app.infra.db, eventStore: app.infra.eventStore, projection: messagesProjection, batchSize: 10 });
    rebuilding = false;
    await Promise.all(readers);
    expect(problems).to.deep.equal([]);
    expect(readsDuring).to.be.greaterThan(10);
    expect(result.generation).to.equal(before + 1);
    expect(await snapshot()).to.deep.equal(live);
  });
});
