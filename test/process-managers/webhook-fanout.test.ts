import { expect } from 'chai';
import { createEventStore } from '../../src/adapters/eventstore/index.js';
import { createPgBossQueue } from '../../src/adapters/queue/pg-boss-queue.js';
import type { AddressSuppressed } from '../../src/domain/suppression/suppression.js';
import { webhookStream, type WebhookSubscriptionEvent } from '../../src/domain/webhooks/subscription.js';
import type { EventStore, Position, RecordedEvent } from '../../src/ports/event-store.js';
import type { JobQueue } from '../../src/ports/job-queue.js';
import { createProcessManagerRunner, type ProcessManager } from '../../src/process-managers/runner.js';
import { createWebhookFanoutManager } from '../../src/process-managers/webhook-fanout.js';
import { createPersonStreams } from '../../src/commands/person-streams.js';
import { DELIVER_WEBHOOK_JOB } from '../../src/domain/webhooks/delivery.js';
import { webhooksProjection } from '../../src/projections/webhooks.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { eventually } from '../support/email-setup.js';
import { recorded } from '../support/given.js';

const suppressed = (value: string | null, over: Partial<AddressSuppressed['data']> = {}): AddressSuppressed => ({
  type: 'AddressSuppressed',
  data: { accountId: 'a1', value, kind: 'email', reason: 'bounced', source: 'bounce', messageId: 'm1', campaignId: null, detail: null, occurredAt: '2024-05-01T10:00:00.000Z', ...over },
});
const subscribed = (id: string, events: string[], accountId = 'a1'): WebhookSubscriptionEvent => ({
  type: 'WebhookSubscribed',
  data: { id, accountId, url: `https://${id}.example.com/`, events: events as never, secret: `whsec_${id}`, createdAt: '2024-05-01T00:00:00.000Z' },
});

// people named by their address here, as a log read without the sealing store names them
const byAddress = (eventStore: Pick<EventStore, 'readStream'>) => createPersonStreams({ eventStore, personOf: (address) => address, namedByAddress: false });

const noChangeToWaitFor = async () => {
  throw new Error('no subscription change was appended');
};

describe('webhook fan-out process manager', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  let eventStore: EventStore;
  // subscriptions are given straight to the read model here: the manager sees no change to wait for
  let webhookFanoutManager: ProcessManager;
  const identity = (base: string) => base;

  beforeEach(async () => {
    database = await createTestDatabase();
    // the read model the manager consults, under its base name
    await database.db.transaction((trx) => webhooksProjection.setup(trx, identity));
    eventStore = createEventStore({ databaseUrl: database.url });
    webhookFanoutManager = createWebhookFanoutManager({ db: database.db, eventStore, streams: byAddress(eventStore), waitForReadModel: noChangeToWaitFor });
  });
  afterEach(async () => {
    await eventStore?.close();
    await database?.drop();
  });

  const givenSubscriptions = (...events: WebhookSubscriptionEvent[]) =>
    database.db.transaction((trx) => webhooksProjection.handle(recorded('webhook-x', events), trx, identity));
  /** What the runner does with a batch: prepare, then decide in a transaction. */
  const decide = async (events: RecordedEvent[]) => {
    await webhookFanoutManager.prepare!(events);
    return database.db.transaction((trx) => webhookFanoutManager.handle(events, trx));
  };
  const upserted = (email: string, contactId: string, firstName: string, at: string) => ({
    id: crypto.randomUUID(),
    type: 'ContactUpserted',
    data: { contactId, accountId: 'a1', email, created: true, fields: { firstName, lastName: 'L', company: null, tags: [], status: 'subscribed', listIds: [] }, at },
  });
  const appended = async (streamId: string, event: { id: string; type: string; data: unknown }) => {
    await eventStore.append(streamId, [event]);
    return (await eventStore.readStream(streamId)).at(-1)!;
  };

  describe('given suppression events, then side effects', () => {
    it('one delivery per (event, subscription) that chose the event; the body is the spec payload plus the event id', async () => {
      await givenSubscriptions(
        subscribed('all', ['contact.unsubscribed', 'contact.bounced', 'contact.complained', 'contact.suppressed']),
        subscribed('bounces', ['contact.bounced']),
        subscribed('unsubs', ['contact.unsubscribed']),
        subscribed('elsewhere', ['contact.bounced'], 'a2'),
      );
      await appended('contact-a1-ada@example.org', upserted('ada@example.org', 'c1', 'Ada', '2024-04-01T00:00:00.000Z'));
      const event = await appended('suppression-a1-ada@example.org', { id: crypto.randomUUID(), ...suppressed('ada@example.org', { campaignId: 'camp-1' }) });
      const effects = await decide([event]);
      expect(effects.map((e) => e.payload.schedule as any).map((s) => s.subscriptionId).sort()).to.deep.equal(['all', 'bounces']);
      for (const effect of effects) {
        expect(effect.kind).to.equal(DELIVER_WEBHOOK_JOB);
        const schedule = effect.payload.schedule as any;
        expect(effect.id).to.equal(`webhook:${schedule.deliveryId}:1`);
        expect(effect.orderingKey).to.equal(`${schedule.subscriptionId}:ada@example.org`);
        expect(schedule).to.include({ accountId: 'a1', event: 'contact.bounced' });
        expect(JSON.parse(schedule.body)).to.deep.equal({
          id: event.id,
          event: 'contact.bounced',
          occurredAt: '2024-05-01T10:00:00.000Z',
          accountId: 'a1',
          data: { email: 'ada@example.org', source: 'bounce', contactId: 'c1', firstName: 'Ada', lastName: 'L', campaignId: 'camp-1' },
        });
      }
      // deciding again gives the same ids: recorded once
      const again = await decide([event]);
      expect(again.map((e) => e.id).sort()).to.deep.equal(effects.map((e) => e.id).sort());
    });

    it('maps each reason to its event; an address with no contact has null contact fields; a phone has no email', async () => {
      await givenSubscriptions(subscribed('all', ['contact.unsubscribed', 'contact.bounced', 'contact.complained', 'contact.suppressed']));
      const events = recorded('s', [
        suppressed('a@example.org', { reason: 'unsubscribed', source: 'one_click' }),
        suppressed('b@example.org', { reason: 'complained', source: 'complaint' }),
        suppressed('c@example.org', { reason: 'manual', source: 'manual', messageId: null }),
        suppressed('+14155550100', { kind: 'phone', reason: 'sms_optout', source: 'sms_optout', messageId: null }),
      ]);
      const effects = await decide(events);
      const bodies = effects.map((e) => JSON.parse((e.payload.schedule as any).body));
      expect(bodies.map((b) => [b.event, b.data.source])).to.deep.equal([
        ['contact.unsubscribed', 'one_click'],
        ['contact.complained', 'complaint'],
        ['contact.suppressed', 'manual'],
        ['contact.suppressed', 'sms_optout'],
      ]);
      expect(bodies[0].data).to.deep.equal({ email: 'a@example.org', source: 'one_click', contactId: null, firstName: null, lastName: null, campaignId: null });
      expect(bodies[3].data).to.deep.include({ email: null, phone: '+14155550100' });
      // lifting a suppression is no webhook event
      const lifted = recorded('s', [{ type: 'SuppressionLifted', data: { accountId: 'a1', value: 'a@example.org', kind: 'email', liftedAt: 't', by: 'u' } }]);
      expect(await decide(lifted)).to.deep.equal([]);
    });

    it("an erased person's unsubscribe (no address, a keyed hash only) is no webhook: it names nobody a receiver could act on", async () => {
      await givenSubscriptions(subscribed('unsubs', ['contact.unsubscribed']));
      const [event] = recorded('s', [suppressed(null, { reason: 'unsubscribed', source: 'one_click' })]);
      expect(await decide([{ ...event, metadata: { ...event.metadata, person: 'keyed-hash' } }])).to.deep.equal([]);
    });

    it('reads no contact for an event no endpoint takes (an account without webhooks, an event not chosen)', async () => {
      await givenSubscriptions(subscribed('bounces', ['contact.bounced']));
      const reads: string[] = [];
      const counting: Pick<EventStore, 'readStream'> = { readStream: async (streamId) => (reads.push(streamId), eventStore.readStream(streamId)) };
      webhookFanoutManager = createWebhookFanoutManager({
        db: database.db,
        eventStore: counting,
        streams: byAddress(counting),
        waitForReadModel: noChangeToWaitFor,
      });
      const events = recorded('s', [
        suppressed('a@example.org', { reason: 'unsubscribed', source: 'one_click' }),
        suppressed('b@example.org', { accountId: 'a2' }),
        suppressed('c@example.org'),
      ]);
      const effects = await decide(events);
      expect(effects.map((e) => JSON.parse((e.payload.schedule as any).body).data.email)).to.deep.equal(['c@example.org']);
      expect(reads).to.deep.equal(['contact-a1-c@example.org']);
    });

    it('names the contact as it stood at the suppression: upserted just before (whatever the contacts read model has), renamed after', async () => {
      await givenSubscriptions(subscribed('all', ['contact.bounced']));
      await appended('contact-a1-ada@example.org', upserted('ada@example.org', 'c1', 'Ada', '2024-04-01T00:00:00.000Z'));
      const event = await appended('suppression-a1-ada@example.org', { id: crypto.randomUUID(), ...suppressed('ada@example.org') });
      await appended('contact-a1-ada@example.org', upserted('ada@example.org', 'c1', 'Augusta', '2024-06-01T00:00:00.000Z'));
      const [effect] = await decide([event]);
      expect(JSON.parse((effect.payload.schedule as any).body).data).to.include({ contactId: 'c1', firstName: 'Ada' });
    });
  });

  describe('restarts (its checkpoint)', () => {
    let queue: JobQueue;
    beforeEach(() => {
      queue = createPgBossQueue({ connectionString: database.url });
    });
    afterEach(async () => {
      await queue.close();
    });

    const suppress = (n: number, from = 0) =>
      Promise.all(
        Array.from({ length: n }, (_, i) =>
          eventStore.append(`suppression-a1-u${from + i}@example.org`, [{ id: crypto.randomUUID(), ...suppressed(`u${from + i}@example.org`) }], { expectedRevision: 'no_stream' }),
        ),
      );
    const runner = () => createProcessManagerRunner({ db: database.db, eventStore, queue, managers: [webhookFanoutManager], batchSize: 7 });
    const effects = () => database.db('side_effects').where('kind', DELIVER_WEBHOOK_JOB).count<{ n: string }[]>('* as n').then(([r]) => Number(r.n));
    // one queued job per side effect, or the same delivery would be attempted twice at once
    const jobsPerEffect = async () => {
      const rows = await database.db.raw(`SELECT data->>'sideEffectId' AS id, count(*)::int AS n FROM pgboss.job WHERE name = ? GROUP BY 1`, [DELIVER_WEBHOOK_JOB]);
      return rows.rows as { id: string; n: number }[];
    };

    it('a suppression right after an endpoint subscribed waits for the webhooks read model to have it, then reaches it', async () => {
      let caughtUp!: () => void;
      const readModelHasIt = new Promise<void>((resolve) => (caughtUp = resolve));
      const waits: [string, Position][] = [];
      const manager = createWebhookFanoutManager({
        db: database.db,
        eventStore,
        streams: byAddress(eventStore),
        async waitForReadModel(name, position) {
          waits.push([name, position]);
          await readModelHasIt;
        },
      });
      const change = await eventStore.append(webhookStream('late'), [{ id: crypto.randomUUID(), ...subscribed('late', ['contact.bounced']) }], { expectedRevision: 'no_stream' });
      await suppress(1);
      const r = createProcessManagerRunner({ db: database.db, eventStore, queue, managers: [manager] });
      r.start();
      try {
        await eventually(() => Promise.resolve(waits.length), (n) => n === 1);
        expect(waits).to.deep.equal([['webhooks', change.position]]);
        expect(await effects()).to.equal(0);
        // the wait holds no transaction open, which would keep everything appended meanwhile from every reader of the log
        const later = crypto.randomUUID();
        await eventStore.append(`other-${later}`, [{ id: later, type: 'Happened', data: {} }]);
        await eventually(async () => (await eventStore.readAll({ after: change.position, limit: 1000 })).map((e) => e.id), (ids) => ids.includes(later), 5_000);
        // the webhooks projection applies the subscription, and the manager is told
        await givenSubscriptions(subscribed('late', ['contact.bounced']));
        caughtUp();
        await eventually(effects, (n) => n === 1);
        const [payload] = await database.db('side_effects').where('kind', DELIVER_WEBHOOK_JOB).pluck('payload');
        expect(payload.schedule.subscriptionId).to.equal('late');
      } finally {
        caughtUp(); // a failed assertion must not leave the manager waiting
        await r.stop();
      }
    });

    it('stops promptly when stopped while still starting up (between taking ownership and subscribing)', async () => {
      for (const delayMs of [0, 1, 5, 20]) {
        const r = runner();
        r.start();
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        const stopped = await Promise.race([r.stop().then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 5000))]);
        expect(stopped, `stop() ${delayMs} ms after start()`).to.equal(true);
      }
    });

    it('stopped mid-stream and restarted, and even replayed from zero: every delivery exactly once, one job each', async () => {
      await givenSubscriptions(subscribed('s1', ['contact.bounced']), subscribed('s2', ['contact.bounced']));
      await suppress(40);
      const first = runner();
      first.start();
      await eventually(effects, (n) => n >= 14);
      await first.stop();
      const afterStop = await effects();
      await suppress(20, 40);
      expect(await effects()).to.equal(afterStop);

      const second = runner();
      second.start();
      await eventually(effects, (n) => n === 120);
      await second.stop();
      const checkpoint = () => database.db('process_manager_checkpoints').where({ name: webhookFanoutManager.name }).first('commit_pos', 'prepare_pos');
      const end = await checkpoint();

      // a lost checkpoint: everything is decided again, nothing is recorded or queued twice
      await database.db('process_manager_checkpoints').where({ name: webhookFanoutManager.name }).update({ commit_pos: 0, prepare_pos: 0 });
      const third = runner();
      third.start();
      await eventually(checkpoint, (row) => row.commit_pos === end.commit_pos && row.prepare_pos === end.prepare_pos);
      await third.stop();

      expect(await effects()).to.equal(120);
      const ids = await database.db('side_effects').where('kind', DELIVER_WEBHOOK_JOB).pluck('payload');
      const pairs = new Set(ids.map((p: any) => `${JSON.parse(p.schedule.body).data.email}|${p.schedule.subscriptionId}`));
      expect(pairs.size).to.equal(120);
      const jobs = await jobsPerEffect();
      expect(jobs).to.have.length(120);
      expect(jobs.every((j) => j.n === 1)).to.equal(true);
    });
  });
});
