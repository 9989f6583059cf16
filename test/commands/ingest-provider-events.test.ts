import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { createProviderEventIngest } from '../../src/commands/ingest-provider-events.js';
import { createSuppressionCommands } from '../../src/commands/suppressions.js';
import type { NormalizedProviderEvent } from '../../src/domain/provider-events/normalized.js';
import type { EventStore } from '../../src/ports/event-store.js';
import { createProjectionWaiter } from '../../src/projections/waiter.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { emailQueued } from '../support/messages-projection.js';

/** The store without appendMany, as EventStoreDB is; its `failAt`-th append (1-based) throws. */
function streamByStream(store: EventStore, failAt?: number): EventStore & { appends: string[] } {
  const appends: string[] = [];
  return {
    appends,
    async append(streamId, events, options) {
      appends.push(streamId);
      if (appends.length === failAt) throw new Error('store stopped between two appends');
      return store.append(streamId, events, options);
    },
    readStream: (streamId, options) => store.readStream(streamId, options),
    readAll: (options) => store.readAll(options),
    subscribe: (options) => store.subscribe(options),
    close: async () => {},
  };
}

/**
 * A bounce that calls for a suppression writes two streams (the message's outcome and the
 * suppression). A failure between them must not leave a bounce recorded without its suppression.
 */
describe('provider event ingest: the outcome and the suppression it calls for are written together', function () {
  this.timeout(60_000);
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => app?.close());

  const ingestWith = (eventStore: EventStore) => {
    const waiter = createProjectionWaiter({ db: app.infra.db });
    const waitFor = (name: string, position: Parameters<typeof waiter.waitFor>[1] | undefined) => (position ? waiter.waitFor(name, position, 10_000) : Promise.resolve());
    const suppressions = createSuppressionCommands({ eventStore, db: app.infra.db, waitFor, personOf: app.infra.privacy.personOf });
    return createProviderEventIngest({ eventStore, db: app.infra.db, suppressions, actor: 'provider', personOf: app.infra.privacy.personOf });
  };
  /** a queued message to `to` (a campaign's, given its id) and the hard bounce of it */
  const bouncedMessage = async (to: string, campaignId: string | null = null): Promise<{ messageId: string; bounce: NormalizedProviderEvent }> => {
    const messageId = randomUUID();
    const providerMessageId = `ses-${messageId}`;
    // sent through SES and accepted by it: an event counts only for a send of the provider reporting it
    await app.infra.eventStore.append(
      `message-${messageId}`,
      [
        { id: randomUUID(), ...emailQueued(messageId, { accountId: 'default', to, provider: 'ses', campaignId }), metadata: { correlationId: `req-${messageId}` } },
        { id: randomUUID(), type: 'ProviderAccepted', data: { providerMessageId, provider: 'ses', acceptedAt: new Date().toISOString(), attempt: 1 } },
      ],
      { expectedRevision: 'no_stream' },
    );
    const providerEventId = `bounce-${messageId}`;
    return {
      messageId,
      bounce: {
        provider: 'ses',
        messageId,
        providerMessageId,
        recipient: to,
        providerEventId,
        outcome: { type: 'Bounced', data: { providerEventId, occurredAt: new Date().toISOString(), recipient: to, bounceType: 'hard', diagnostic: '550 no such user' } },
        suppress: { reason: 'bounced', source: 'bounce' },
      },
    };
  };
  // the send worker delivers the queued message meanwhile: its events are no part of this
  const types = async (streamId: string) =>
    (await app.infra.eventStore.readStream(streamId)).map((e) => e.type).filter((t) => !t.startsWith('Provider'));

  for (const refused of ['AddressSuppressed', 'Bounced']) {
    it(`in one transaction: when the ${refused} write fails, neither is written; the redelivery records both`, async () => {
      const to = `${refused.toLowerCase()}@bounce.example`;
      const { messageId, bounce } = await bouncedMessage(to);
      await app.infra.db.raw(`
        CREATE FUNCTION test_refuse_event() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.type = '${refused}' THEN RAISE EXCEPTION 'test: this event cannot be written'; END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER test_refuse_event BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION test_refuse_event();`);
      try {
        expect(await ingestWith(app.infra.eventStore).ingest([bounce]).catch((e) => e)).to.be.instanceOf(Error);
      } finally {
        await app.infra.db.raw('DROP TRIGGER test_refuse_event ON events; DROP FUNCTION test_refuse_event()');
      }
      expect(await types(`message-${messageId}`)).to.deep.equal(['EmailQueued']);
      expect(await types(`suppression-default-${app.infra.privacy.personOf(to)}`)).to.deep.equal([]);

      expect(await ingestWith(app.infra.eventStore).ingest([bounce])).to.deep.equal({ recorded: 1, pending: 0 });
      expect(await types(`message-${messageId}`)).to.deep.equal(['EmailQueued', 'Bounced']);
      expect(await types(`suppression-default-${app.infra.privacy.personOf(to)}`)).to.deep.equal(['AddressSuppressed']);
      expect(await app.infra.db('suppressions').where({ account_id: 'default', value: to }).first('reason')).to.deep.equal({ reason: 'bounced' });
    });
  }

  it("what a provider event writes names it as the cause and keeps the message's correlation", async () => {
    const to = 'correlated@bounce.example';
    const { messageId, bounce } = await bouncedMessage(to);
    await ingestWith(app.infra.eventStore).ingest([bounce]);
    const caused = { actor: 'provider', causationId: bounce.providerEventId, correlationId: `req-${messageId}` };
    const bounced = (await app.infra.eventStore.readStream(`message-${messageId}`)).find((e) => e.type === 'Bounced')!;
    expect(bounced.metadata).to.deep.include(caused);
    const [suppressed] = await app.infra.eventStore.readStream(`suppression-default-${app.infra.privacy.personOf(to)}`);
    expect(suppressed.metadata).to.deep.include(caused);
  });

  it("a bounce or complaint of a campaign's message suppresses naming the campaign, as an unsubscribe from it does", async () => {
    for (const [to, campaignId] of [['campaign.bounce@bounce.example', 'cmp-bounced'], ['plain.bounce@bounce.example', null]] as const) {
      const { messageId, bounce } = await bouncedMessage(to, campaignId);
      await ingestWith(app.infra.eventStore).ingest([bounce]);
      const [suppressed] = await app.infra.eventStore.readStream(`suppression-default-${app.infra.privacy.personOf(to)}`);
      expect(suppressed.data, to).to.deep.include({ reason: 'bounced', messageId, campaignId });
    }
    const to = 'campaign.complaint@bounce.example';
    const { messageId, bounce } = await bouncedMessage(to, 'cmp-complained');
    const complaint: NormalizedProviderEvent = {
      ...bounce,
      providerEventId: `complaint-${messageId}`,
      outcome: { type: 'Complained', data: { providerEventId: `complaint-${messageId}`, occurredAt: new Date().toISOString(), recipient: to } },
      suppress: { reason: 'complained', source: 'complaint' },
    };
    await ingestWith(app.infra.eventStore).ingest([complaint]);
    const [suppressed] = await app.infra.eventStore.readStream(`suppression-default-${app.infra.privacy.personOf(to)}`);
    expect(suppressed.data).to.deep.include({ reason: 'complained', messageId, campaignId: 'cmp-complained' });
  });

  it('stream by stream (EventStoreDB): the suppression is written first, and the redelivery adds the outcome once', async () => {
    const to = 'halfway@bounce.example';
    const { messageId, bounce } = await bouncedMessage(to);
    const failing = streamByStream(app.infra.eventStore, 2);
    expect(await ingestWith(failing).ingest([bounce]).catch((e) => e)).to.have.property('message', 'store stopped between two appends');
    expect(failing.appends).to.deep.equal([`suppression-default-${app.infra.privacy.personOf(to)}`, `message-${messageId}`]);
    expect(await types(`message-${messageId}`)).to.deep.equal(['EmailQueued']);
    expect(await types(`suppression-default-${app.infra.privacy.personOf(to)}`)).to.deep.equal(['AddressSuppressed']);

    const again = streamByStream(app.infra.eventStore);
    expect(await ingestWith(again).ingest([bounce])).to.deep.equal({ recorded: 1, pending: 0 });
    expect(again.appends).to.deep.equal([`message-${messageId}`]);
    expect(await types(`message-${messageId}`)).to.deep.equal(['EmailQueued', 'Bounced']);
    expect(await types(`suppression-default-${app.infra.privacy.personOf(to)}`)).to.deep.equal(['AddressSuppressed']);
    // a third delivery changes nothing
    expect(await ingestWith(again).ingest([bounce])).to.deep.equal({ recorded: 1, pending: 0 });
    expect(again.appends).to.have.length(1);
  });
});
