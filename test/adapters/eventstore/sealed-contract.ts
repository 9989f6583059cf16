import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import { createDataKeys } from '../../../src/adapters/crypto/data-keys.js';
import { createMasterKey } from '../../../src/adapters/crypto/master-key.js';
import { createMemoryKeyStore } from '../../../src/adapters/crypto/memory-key-store.js';
import { createSealingEventStore, SEALED } from '../../../src/adapters/crypto/sealing-event-store.js';
import type { EventStore, NewEvent, RecordedEvent } from '../../../src/ports/event-store.js';

const ADDRESS = 'Sealed.Person@example.org';
const BODY = 'sealed-body-marker';

const queued = (accountId: string, to = ADDRESS): NewEvent => ({
  id: randomUUID(),
  type: 'EmailQueued',
  data: { messageId: 'm', accountId, to, from: 'app@example.com', fromEmail: 'app@example.com', fromName: null, subject: `Hello ${BODY}`, html: `<p>${BODY}</p>`, text: BODY, headers: [], queuedAt: new Date().toISOString() },
});
const delivered = (): NewEvent => ({ id: randomUUID(), type: 'Delivered', data: { providerEventId: randomUUID(), occurredAt: new Date().toISOString(), recipient: ADDRESS, smtpResponse: `250 ok ${ADDRESS}` } });
const raw = (events: RecordedEvent[]) => JSON.stringify(events.map((e) => [e.type, e.data, e.metadata]));

/**
 * Personal data sealed above the store port (src/adapters/crypto/sealing-event-store.ts): whatever
 * the adapter, it stores no personal data in clear, gives it back to readers, and once the person's
 * keys are destroyed every way of reading it (a stream, all, a subscription) gives it redacted, while
 * the stored events stay exactly as they were appended.
 */
export function sealedStoreContract(inner: () => EventStore) {
  describe('with personal data sealed above it', () => {
    let store: EventStore;
    let keyStore: ReturnType<typeof createMemoryKeyStore>;
    let keys: ReturnType<typeof createDataKeys>;
    const master = createMasterKey(randomBytes(32));
    let accountId: string;
    let s: string;
    beforeEach(() => {
      keyStore = createMemoryKeyStore();
      keys = createDataKeys({ store: keyStore, master });
      store = createSealingEventStore(inner(), { keys, master, store: keyStore });
      accountId = `acc-${randomUUID()}`;
      s = `message-${randomUUID()}`;
    });
    const erase = async () => {
      await keyStore.erase(accountId, master.person(ADDRESS));
      keys.forget(accountId, master.person(ADDRESS));
    };

    it('stores the personal fields sealed, names the person by keyed hash, and reads them back', async () => {
      await store.append(s, [queued(accountId), delivered()]);
      const stored = await inner().readStream(s);
      expect(raw(stored)).to.not.include(BODY).and.not.include(ADDRESS);
      expect(stored[0].data[SEALED]).to.be.a('string');
      expect(stored[0].data).to.include({ accountId, fromEmail: 'app@example.com' });
      const read = await store.readStream(s);
      expect(read[0].data).to.include({ to: ADDRESS, text: BODY });
      expect(read[0].data).to.not.have.property(SEALED);
      expect(read[1].data).to.include({ recipient: ADDRESS });
      expect(read[0].metadata.person).to.equal(master.person(ADDRESS.toLowerCase()));
      expect(read[1].metadata.person).to.equal(read[0].metadata.person);
    });

    it('after the keys are destroyed, a stream, all and a subscription read redacted (what was opened before included); the stored events are unchanged', async () => {
      await store.append(s, [queued(accountId), delivered()]);
      const before = raw(await inner().readStream(s));
      expect((await store.readStream(s))[0].data.text).to.equal(BODY);
      await erase();
      const [q, d] = await store.readStream(s);
      expect(q.data).to.include({ to: null, subject: null, html: null, text: null, accountId });
      expect(d.data).to.include({ recipient: null, smtpResponse: null });
      expect(raw(await store.readAll({ streamPrefixes: [s] }))).to.not.include(BODY).and.not.include(ADDRESS);
      const seen: RecordedEvent[] = [];
      const sub = store.subscribe({ streamPrefixes: [s], onEvents: async (events) => void seen.push(...events) });
      const end = Date.now() + 5000;
      while (seen.length < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
      await sub.close();
      expect(seen.map((e) => (e.type === 'EmailQueued' ? e.data.to : e.data.recipient))).to.deep.equal([null, null]);
      expect(raw(await inner().readStream(s))).to.equal(before);
    });

    it('what arrives about an erased person’s message later is unreadable from the start; another person’s stays readable', async () => {
      const other = `message-${randomUUID()}`;
      await store.append(s, [queued(accountId)]);
      await store.append(other, [queued(accountId, 'someone.else@example.org')]);
      await erase();
      await store.append(s, [delivered()]);
      expect((await store.readStream(s))[1].data.recipient).to.equal(null);
      expect((await store.readStream(other))[0].data.to).to.equal('someone.else@example.org');
    });

    it('events written in clear before sealing read as they are, and redacted once their person is erased', async () => {
      await inner().append(s, [queued(accountId)]);
      expect((await store.readStream(s))[0].data.text).to.equal(BODY);
      await erase();
      expect((await store.readStream(s))[0].data).to.include({ to: null, text: null });
    });

    it('retention: destroying the days before today leaves today’s messages and the contact profile readable', async () => {
      await store.append(s, [queued(accountId)]);
      const contact = `contact-${randomUUID()}`;
      await store.append(contact, [{ id: randomUUID(), type: 'ContactUpserted', data: { contactId: 'c', accountId, email: ADDRESS, created: true, fields: { firstName: 'Ada' }, at: '' } }]);
      const today = new Date().toISOString().slice(0, 10);
      const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
      expect((await store.readStream(s))[0].data.text).to.equal(BODY);
      expect(await keyStore.destroyBefore(accountId, today)).to.equal(0);
      expect(await keyStore.destroyBefore(accountId, tomorrow)).to.equal(1);
      keys.forgetAll();
      expect((await store.readStream(s))[0].data.text).to.equal(null);
      expect((await store.readStream(contact))[0].data.fields).to.deep.equal({ firstName: 'Ada' });
    });
  });
}
