import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import { createDataKeys } from '../../../src/adapters/crypto/data-keys.js';
import { createMasterKey } from '../../../src/adapters/crypto/master-key.js';
import { createPgKeyStore } from '../../../src/adapters/crypto/pg-key-store.js';
import { createSealingEventStore } from '../../../src/adapters/crypto/sealing-event-store.js';
import { createPostgresEventStore } from '../../../src/adapters/eventstore/postgres-event-store.js';
import { WrongExpectedRevisionError, type EventStore, type NewEvent } from '../../../src/ports/event-store.js';
import type { KeyStore } from '../../../src/ports/key-store.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';

const queued = (accountId: string, to: string): NewEvent => ({
  id: randomUUID(),
  type: 'EmailQueued',
  data: { messageId: 'm', accountId, to, from: 'app@example.com', fromEmail: 'app@example.com', fromName: null, subject: 'Hello', html: '<p>Hi</p>', text: 'Hi', headers: [], queuedAt: new Date().toISOString() },
});

/**
 * The sealing store on PostgreSQL with its keys in the same database: a new key goes into the
 * transaction of the first append sealed under it (no write of its own), other appends under it
 * wait for that one, and a key whose append failed is never used again.
 */
describe('Sealing event store, keys stored with the events (PostgreSQL)', function () {
  let db: TestDatabase;
  let bare: EventStore;
  let keyStore: KeyStore;
  let storedAlone: number;
  const master = createMasterKey(randomBytes(32));
  let accountId: string;
  before(async () => {
    db = await createTestDatabase();
    bare = createPostgresEventStore({ connectionString: db.url });
    const pgKeys = createPgKeyStore(db.db);
    keyStore = { ...pgKeys, store: (keys) => ((storedAlone += keys.length), pgKeys.store(keys)) };
  });
  after(async () => {
    await bare.close();
    await db.drop();
  });
  beforeEach(() => {
    storedAlone = 0;
    accountId = `acc-${randomUUID()}`;
  });
  const sealing = () => createSealingEventStore(bare, { keys: createDataKeys({ store: keyStore, master }), master, store: keyStore, keysWithEvents: true });
  const keysOf = async (address: string) => (await db.db('data_keys').where({ account_id: accountId, person: master.person(address) }).select('id')).map((r) => r.id);

  it('stores a new key in its append’s statement, and a process with a cold cache reads the events', async () => {
    const store = sealing();
    await Promise.all(['a', 'b', 'c'].map((n) => store.append(`message-${randomUUID()}`, [queued(accountId, `${n}@example.org`)], { expectedRevision: 'no_stream' })));
    const s = `message-${randomUUID()}`;
    await store.append(s, [queued(accountId, 'a@example.org')]);
    expect(storedAlone).to.equal(0);
    expect(await keysOf('a@example.org')).to.have.length(1);
    expect((await sealing().readStream(s))[0].data.to).to.equal('a@example.org');
  });

  it('an append under a key another append is storing waits for it; when that append is refused, it seals again under a new key', async () => {
    const store = sealing();
    const taken = `message-${randomUUID()}`;
    await bare.append(taken, [{ id: randomUUID(), type: 'T', data: {} }]);
    const other = `message-${randomUUID()}`;
    const [refused, appended] = await Promise.allSettled([
      store.append(taken, [queued(accountId, 'd@example.org')], { expectedRevision: 'no_stream' }),
      store.append(other, [queued(accountId, 'd@example.org')], { expectedRevision: 'no_stream' }),
    ]);
    expect(refused.status === 'rejected' && refused.reason).to.be.instanceOf(WrongExpectedRevisionError);
    expect(appended.status).to.equal('fulfilled');
    const keys = await keysOf('d@example.org');
    expect(keys).to.have.length(1);
    const [event] = await bare.readStream(other);
    expect(event.data.$sealed.startsWith(`${keys[0]}.`)).to.equal(true);
    // what follows about the message is sealed under the key it was appended with
    await store.append(other, [{ id: randomUUID(), type: 'Delivered', data: { providerEventId: randomUUID(), occurredAt: new Date().toISOString(), recipient: 'd@example.org' } }]);
    const read = await sealing().readStream(other);
    expect(read.map((e) => e.data.to ?? e.data.recipient)).to.deep.equal(['d@example.org', 'd@example.org']);
  });

  it('concurrent calls sealed under each other’s new keys all commit (one stores its own key alone rather than wait while holding it), each key once', async () => {
    const store = sealing();
    const streams: [string, string][] = [];
    const call = (...to: string[]) => {
      const appends = to.map((address) => ({ streamId: `message-${randomUUID()}`, events: [queued(accountId, address)] }));
      appends.forEach((a, i) => streams.push([a.streamId, to[i]]));
      return appends.length === 1 ? store.append(appends[0].streamId, appends[0].events) : store.appendMany!(appends);
    };
    await Promise.all([call('e@example.org', 'f@example.org'), call('f@example.org', 'e@example.org'), call('e@example.org')]);
    expect(await keysOf('e@example.org')).to.have.length(1);
    expect(await keysOf('f@example.org')).to.have.length(1);
    const cold = sealing();
    for (const [s, to] of streams) expect((await cold.readStream(s))[0].data.to).to.equal(to);
  });

  it('every reader gets provider event ids an earlier version ended with an address or link without it: in the metadata always, in the data once the event reads as redacted', async () => {
    const store = sealing();
    const s = `message-${randomUUID()}`;
    const legacy = 'pm:delivery:pm-7:g@example.org';
    const provider = { actor: 'provider', commandId: legacy, causationId: legacy };
    await store.append(s, [queued(accountId, 'g@example.org')]);
    // as an earlier version appended them: the outcome sealed, its id in clear; the acceptance it proved, not personal at all
    await store.append(s, [
      { id: randomUUID(), type: 'ProviderAccepted', data: { providerMessageId: 'pm-7', provider: 'postmark', acceptedAt: 't', attempt: 1 }, metadata: provider },
      { id: randomUUID(), type: 'Delivered', data: { providerEventId: legacy, occurredAt: 't', recipient: 'g@example.org' }, metadata: provider },
    ]);
    const text = (events: { data: unknown; metadata: unknown }[]) => JSON.stringify(events.map((e) => [e.data, e.metadata]));
    expect(text(await bare.readStream(s))).to.include(legacy);
    const read = async () => {
      const fromStream = await sealing().readStream(s);
      const fromLog = (await sealing().readAll({ streamPrefixes: [s] })).filter((e) => e.streamId === s);
      const followed: typeof fromStream = [];
      const subscription = sealing().subscribe({ streamPrefixes: [s], onEvents: async (events) => void followed.push(...events.filter((e) => e.streamId === s)) });
      const deadline = Date.now() + 10_000;
      while (followed.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await subscription.close();
      return [fromStream, fromLog, followed];
    };
    for (const events of await read()) {
      expect(events.map((e) => e.type)).to.deep.equal(['EmailQueued', 'ProviderAccepted', 'Delivered']);
      expect(JSON.stringify(events.map((e) => e.metadata))).to.not.include('g@example.org');
      expect(events[1].metadata).to.include({ commandId: 'pm:delivery:pm-7', causationId: 'pm:delivery:pm-7' });
      // readable: the id as recorded (the decider tells a redelivery under the old id apart by it)
      expect(events[2].data).to.include({ providerEventId: legacy, recipient: 'g@example.org' });
    }
    await keyStore.erase(accountId, master.person('g@example.org'));
    for (const erased of await read()) {
      expect(erased[2].data).to.include({ providerEventId: 'pm:delivery:pm-7', recipient: null });
      expect(text(erased)).to.not.include('g@example.org');
    }
  });
});
