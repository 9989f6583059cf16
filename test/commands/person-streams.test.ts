import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { createEventStore } from '../../src/adapters/eventstore/index.js';
import { createPersonStreams } from '../../src/commands/person-streams.js';
import type { EventStore } from '../../src/ports/event-store.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

const personOf = (address: string) => `hash(${address})`;

describe('person streams: keyed by hash, or by address in a database from before sealing', function () {
  this.timeout(30_000);
  let database: TestDatabase;
  let store: EventStore;
  const reads: string[][] = [];
  // what the resolver reads, on a store that answers revisions in one read and on one that cannot (EventStoreDB)
  const counting = () => ({ streamRevisions: (ids: string[]) => (reads.push(ids), store.streamRevisions!(ids)), readStream: store.readStream.bind(store) });
  const withoutRevisions = () => ({ readStream: (id: string) => (reads.push([id]), store.readStream(id)) });
  const made = (streamId: string) => store.append(streamId, [{ id: randomUUID(), type: 'Made', data: {}, metadata: { actor: 'test' } }]);

  before(async () => {
    database = await createTestDatabase();
    store = createEventStore({ databaseUrl: database.url });
    await made('contact-a1-old@example.org');
    await made('suppression-a1-old@example.org');
    await made('contact-a1-both@example.org');
    await made('contact-a1-hash(both@example.org)');
  });
  after(async () => {
    await store.close();
    await database.drop();
  });
  beforeEach(() => (reads.length = 0));

  for (const [name, eventStore] of [['one read of revisions', counting], ['stream by stream', withoutRevisions]] as const) {
    it(`named by address where only that stream exists; the keyed name everywhere else (${name})`, async () => {
      const streams = createPersonStreams({ eventStore: eventStore(), personOf, namedByAddress: true });
      expect(await streams.contacts('a1', ['old@example.org', 'both@example.org', 'new@example.org'])).to.deep.equal([
        'contact-a1-old@example.org',
        'contact-a1-hash(both@example.org)',
        'contact-a1-hash(new@example.org)',
      ]);
      expect(await streams.contact('a2', 'old@example.org')).to.equal('contact-a2-hash(old@example.org)');
      expect(
        await streams.suppressions([
          { accountId: 'a1', value: 'old@example.org' },
          { accountId: 'a1', value: null, person: 'hash(erased@example.org)' },
        ]),
      ).to.deep.equal(['suppression-a1-old@example.org', 'suppression-a1-hash(erased@example.org)']);
    });
  }

  it('a database made since sealing reads nothing to name a stream', async () => {
    const streams = createPersonStreams({ eventStore: counting(), personOf, namedByAddress: false });
    expect(await streams.contacts('a1', ['old@example.org'])).to.deep.equal(['contact-a1-hash(old@example.org)']);
    expect(await streams.suppressions([{ accountId: 'a1', value: 'old@example.org' }])).to.deep.equal(['suppression-a1-hash(old@example.org)']);
    expect(reads).to.deep.equal([]);
  });

  it('names a batch in one read', async () => {
    const streams = createPersonStreams({ eventStore: counting(), personOf, namedByAddress: true });
    await streams.contacts('a1', ['old@example.org', 'new@example.org']);
    expect(reads).to.have.lengthOf(1);
  });
});
