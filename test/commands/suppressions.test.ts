import { expect } from 'chai';
import { createSuppressionCommands, type SuppressInput } from '../../src/commands/suppressions.js';
import type { EventStore } from '../../src/ports/event-store.js';
import { startTestApp, type TestApp } from '../support/app.js';

/** recordMany: an import's or an opt-out sync's suppressions, each once, new streams without a read. */
describe('suppressions: recordMany', function () {
  this.timeout(60_000);
  let app: TestApp;
  let accountId: string;
  before(async () => {
    app = await startTestApp();
    accountId = (await app.infra.db('accounts').first('id')).id;
  });
  after(async () => app?.close());

  const commandsOver = (eventStore: EventStore) =>
    createSuppressionCommands({ eventStore, db: app.infra.db, waitFor: async () => {}, personOf: app.infra.privacy.personOf });
  const streamOf = (email: string) => `suppression-${accountId}-${app.infra.privacy.personOf(email)}`;
  const input = (email: string): SuppressInput => ({ accountId, email, reason: 'manual', source: 'import', actor: 'user:test' });
  const emails = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}@example.org`);
  /** the stream's events by type, in order */
  const history = async (email: string) => (await app.infra.eventStore.readStream(streamOf(email))).map((e) => e.type);
  /** the event store, recording which streams were read */
  function readsCounted(store: EventStore) {
    const read: string[] = [];
    const wrapped: EventStore = Object.create(store);
    wrapped.readStream = (streamId, ...rest) => (read.push(streamId), store.readStream(streamId, ...rest));
    return { store: wrapped, read };
  }

  it('suppresses each entry once: new streams appended without a read, an existing or repeated one decided on its history', async () => {
    const fresh = emails('fresh', 40);
    // suppressed, then lifted: its stream exists, and the new suppression is decided on it
    await commandsOver(app.infra.eventStore).record(input('lifted@example.org'));
    await commandsOver(app.infra.eventStore).lift(accountId, { actor: 'user:test', clientIp: null }, 'lifted@example.org');
    const { store, read } = readsCounted(app.infra.eventStore);
    const result = await commandsOver(store).recordMany([...fresh, 'lifted@example.org', 'fresh0@example.org'].map(input));
    expect(result.suppressed).to.equal(41);
    expect(result.position).to.not.equal(undefined);
    expect(read.sort()).to.deep.equal([streamOf('fresh0@example.org'), streamOf('lifted@example.org')].sort());
    for (const email of fresh) expect(await history(email)).to.deep.equal(['AddressSuppressed']);
    expect(await history('lifted@example.org')).to.deep.equal(['AddressSuppressed', 'SuppressionLifted', 'AddressSuppressed']);
  });

  it('a stream made after the list was checked is read and decided again: its own entry stays', async () => {
    const list = emails('raced', 10);
    const { store, read } = readsCounted(app.infra.eventStore);
    // another request suppresses one of them after this one saw the streams missing
    store.streamRevisions = async (ids) => {
      const revisions = await app.infra.eventStore.streamRevisions!(ids);
      await commandsOver(app.infra.eventStore).record({ ...input(list[3]), reason: 'complained' });
      return revisions;
    };
    expect((await commandsOver(store).recordMany(list.map(input))).suppressed).to.equal(9);
    expect(read).to.deep.equal([streamOf(list[3])]);
    for (const email of list) expect(await history(email)).to.deep.equal(['AddressSuppressed']);
    expect((await app.infra.eventStore.readStream(streamOf(list[3])))[0].data.reason).to.equal('complained');
  });

  it('on a store that cannot tell which streams exist, each entry is decided on its stream as read', async () => {
    const list = emails('unknown', 5);
    const { store, read } = readsCounted(app.infra.eventStore);
    store.streamRevisions = undefined;
    expect((await commandsOver(store).recordMany([...list, list[0]].map(input))).suppressed).to.equal(5);
    // each read once at least (the repeated entry's two appends race: one reads again)
    expect(new Set(read)).to.have.lengthOf(5);
    expect(read.length).to.be.at.least(6);
  });
});
