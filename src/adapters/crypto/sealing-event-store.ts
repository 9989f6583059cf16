import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { CONTACT_ERASED } from '../../domain/contacts/contact.js';
import { keyScopeName, PERSONAL_DATA, personalPart, redact, type PersonalDataRule } from '../../domain/privacy/personal-data.js';
import { metadataWithoutPersonalIds } from '../../domain/provider-events/provider-event-ids.js';
import type { EventStore, NewEvent, RecordedEvent } from '../../ports/event-store.js';
import type { KeySlot, KeyStore } from '../../ports/key-store.js';
import { open, seal } from './aes-gcm.js';
import type { DataKey, DataKeys, NewKey } from './data-keys.js';
import type { MasterKey } from './master-key.js';

/** Where sealed fields go in an event's data: `<key id>.<base64 box>`. */
export const SEALED = '$sealed';

/** Whose a stream's personal data is: the key its first personal event was sealed under, or (a stream begun in clear) the slot to seal new events under. */
type StreamOwner = { accountId?: string; person: string; keyId: string } | { accountId: string; person: string; slot: KeySlot };

const aad = (type: string, keyId: string) => `${type}\n${keyId}`;

/** One append's sealing: the keys its events were sealed under, and the streams whose owner it taught (with the key). */
interface Sealing {
  used: Set<DataKey>;
  learned: [streamId: string, keyId: string][];
}

/**
 * The event store with personal data sealed: on the way in, the fields PERSONAL_DATA lists are
 * encrypted (AES-256-GCM) under their person's data key and `metadata.person` names the person by
 * keyed hash; on the way out they are opened again, or read as redacted when the key is gone. It sits
 * above the store port, so both stores (PostgreSQL, EventStoreDB) keep the same append-only log and
 * erasing a person (destroying their keys) works the same on both. Events written in clear before the
 * log was sealed are read as redacted once their person is erased. Provider event ids that earlier
 * versions ended with an address or link lose it with the rest when an event reads as redacted, and
 * in the metadata always (docs/privacy.md).
 */
export function createSealingEventStore(
  inner: EventStore,
  deps: {
    keys: DataKeys;
    master: MasterKey;
    store: KeyStore;
    /** `inner` is on the database of the key store and commits new keys with the events (StreamAppend.keys) */
    keysWithEvents?: boolean;
  },
): EventStore {
  const owners = new LRUCache<string, StreamOwner>({ max: 100_000 });

  async function ownerOf(streamId: string): Promise<StreamOwner | undefined> {
    if (!owners.has(streamId)) await store.readStream(streamId); // reading learns it
    return owners.get(streamId);
  }

  /** The event sealed; the keys it was sealed under go to `used`, the streams whose owner it taught to `learned`. */
  async function sealOne(streamId: string, e: NewEvent, sealing: Sealing): Promise<NewEvent> {
    const rule = PERSONAL_DATA[e.type];
    if (!rule) return e;
    const data = e.data as Record<string, any>;
    const owner = rule.owner(data);
    let person: string;
    let key: DataKey;
    if (owner === 'stream') {
      const known = await ownerOf(streamId);
      if (!known) return e; // nothing personal precedes it (a decider never allows this)
      person = known.person;
      if ('keyId' in known) {
        // The message's own key; once destroyed, a random one nobody keeps: what arrives about an
        // erased person's message is unreadable from the start.
        const stored = (await deps.keys.byIds([{ id: known.keyId, accountId: known.accountId, person }])).get(known.keyId);
        key = { id: known.keyId, key: stored ?? randomBytes(32), stored: Promise.resolve() };
      } else key = deps.keys.keyFor(known.slot);
    } else {
      if (typeof owner.address !== 'string') return e; // names nobody: nothing to seal
      person = deps.master.person(owner.address);
      key = deps.keys.keyFor({ accountId: owner.accountId, person, scope: keyScopeName(rule, new Date(), data) });
      if (!owners.has(streamId)) {
        owners.set(streamId, { accountId: owner.accountId, person, keyId: key.id });
        sealing.learned.push([streamId, key.id]);
      }
    }
    sealing.used.add(key);
    const { personal, rest } = personalPart(rule, data);
    const box = seal(key.key, Buffer.from(JSON.stringify(personal), 'utf8'), aad(e.type, key.id));
    return { ...e, data: { ...rest, [SEALED]: `${key.id}.${box.toString('base64')}` }, metadata: { ...e.metadata, person } };
  }

  async function sealAll(streamId: string, events: NewEvent[], sealing: Sealing): Promise<NewEvent[]> {
    const out: NewEvent[] = [];
    for (const e of events) out.push(await sealOne(streamId, e, sealing));
    return out;
  }

  /**
   * Appends once the events are sealed, never an event whose key a crash could lose: the new keys
   * this append made go into its own transaction where the store takes them (`keysWithEvents`), else
   * are stored just before it; keys another append made and is still storing are waited for. An
   * append that would wait stores its own keys alone, so no two appends ever wait for each other. Should
   * the key waited for fail to be stored, the events are sealed again under a new one.
   */
  async function appendSealed<R>(seal: (sealing: Sealing) => Promise<(keys: NewKey[]) => Promise<R>>): Promise<R> {
    for (let attempt = 1; ; attempt++) {
      const sealing: Sealing = { used: new Set(), learned: [] };
      const append = await seal(sealing);
      const own = deps.keys.claim(sealing.used);
      const others = [...sealing.used].filter((k) => deps.keys.waitsForOthers(k, own));
      const withEvents = deps.keysWithEvents === true && others.length === 0;
      if (!withEvents) {
        try {
          await deps.keys.storeAlone(own);
        } catch (err) {
          unlearn(sealing);
          throw err;
        }
        try {
          await Promise.all(others.map((k) => k.stored));
        } catch (err) {
          unlearn(sealing, others);
          if (attempt < 3) continue;
          throw err;
        }
      }
      try {
        const result = await append(withEvents ? own : []);
        if (withEvents) deps.keys.settled(own);
        return result;
      } catch (err) {
        if (withEvents) {
          deps.keys.settled(own, err);
          unlearn(sealing, own);
        }
        throw err;
      }
    }
  }

  /** Forgets the stream owners an append taught under keys that were not stored (`failed`; all when not given). */
  function unlearn(sealing: Sealing, failed?: { id: string }[]): void {
    for (const [streamId, keyId] of sealing.learned) {
      if (failed && !failed.some((k) => k.id === keyId)) continue;
      const known = owners.get(streamId);
      if (known && 'keyId' in known && known.keyId === keyId) owners.delete(streamId);
    }
  }

  /** The person of an event written in clear, learning streams' owners in log order. */
  function clearPerson(e: RecordedEvent, rule: PersonalDataRule): { accountId: string; person: string } | undefined {
    const owner = rule.owner(e.data ?? {});
    if (owner === 'stream') {
      const known = owners.get(e.streamId);
      return known?.accountId ? { accountId: known.accountId, person: known.person } : undefined;
    }
    if (typeof owner.address !== 'string') return undefined;
    const person = deps.master.person(owner.address);
    if (!owners.has(e.streamId)) owners.set(e.streamId, { accountId: owner.accountId, person, slot: { accountId: owner.accountId, person, scope: keyScopeName(rule, e.recordedAt, e.data) } });
    return { accountId: owner.accountId, person };
  }

  /**
   * The events with their personal data opened. `live`: read by this process's live readers, whose
   * plaintexts are kept a moment for the others (DataKeys.opened) and whose streams' owners are learnt
   * for the outcomes appended to them next; a one-off reader (a rebuild paging through the log) would
   * only churn both caches.
   */
  async function openAll(events: RecordedEvent[], live: boolean): Promise<RecordedEvent[]> {
    const refs = new Map<string, { id: string; accountId?: string; person?: string }>();
    const clear = new Map<RecordedEvent, { accountId: string; person: string }>();
    for (const e of events) {
      const rule = PERSONAL_DATA[e.type];
      if (!rule) continue;
      const sealed = e.data?.[SEALED];
      if (typeof sealed === 'string') {
        const id = sealed.slice(0, sealed.indexOf('.'));
        const person = e.metadata.person as string | undefined;
        const accountId = typeof e.data.accountId === 'string' ? e.data.accountId : undefined;
        if (!refs.has(id)) refs.set(id, { id, accountId, person });
        if (live && person && !owners.has(e.streamId)) owners.set(e.streamId, { accountId, person, keyId: id });
      } else {
        const person = clearPerson(e, rule);
        if (person) clear.set(e, person);
      }
    }
    const keys = refs.size ? await deps.keys.byIds(refs.values()) : new Map<string, Buffer | null>();
    const erased = clear.size ? await deps.store.erased([...clear.values()]) : new Set<string>();
    return events.map((e) => metadataWithoutPersonalIds(openOne(e)));

    function openOne(e: RecordedEvent): RecordedEvent {
      if (e.type === CONTACT_ERASED) deps.keys.forget(e.data.accountId, e.data.person);
      const rule = PERSONAL_DATA[e.type];
      if (!rule) return e;
      const sealed = e.data?.[SEALED];
      if (typeof sealed !== 'string') {
        const who = clear.get(e);
        if (!who) return e;
        const gone = erased.has(`${who.accountId}\n${who.person}`);
        return { ...e, data: gone ? redact(rule, e.data) : e.data, metadata: { ...e.metadata, person: who.person } };
      }
      const dot = sealed.indexOf('.');
      const id = sealed.slice(0, dot);
      const rest: Record<string, unknown> = {};
      for (const field in e.data) if (field !== SEALED) rest[field] = e.data[field];
      const key = keys.get(id);
      // the other readers of this process opened it moments ago: decrypting once is enough
      let text = key ? deps.keys.opened(e.id) : undefined;
      if (key && text === undefined) {
        text = open(key, Buffer.from(sealed.slice(dot + 1), 'base64'), aad(e.type, id))?.toString('utf8');
        if (text !== undefined && live) deps.keys.rememberOpened(e.id, text, rest.accountId as string | undefined, e.metadata.person as string | undefined);
      }
      return { ...e, data: text !== undefined ? Object.assign(rest, JSON.parse(text)) : redact(rule, rest) };
    }
  }

  const store: EventStore = {
    append(streamId, events, options) {
      return appendSealed(async (sealing) => {
        const sealed = await sealAll(streamId, events, sealing);
        return (keys) => inner.append(streamId, sealed, keys.length ? { ...options, keys } : options);
      });
    },
    async readStream(streamId, options) {
      return openAll(await inner.readStream(streamId, options), true);
    },
    async readAll(options) {
      return openAll(await inner.readAll(options), false);
    },
    subscribe(options) {
      return inner.subscribe({ ...options, onEvents: async (events) => options.onEvents(await openAll(events, true)) });
    },
    close: () => inner.close(),
  };
  // revisions say nothing personal
  if (inner.streamRevisions) store.streamRevisions = inner.streamRevisions.bind(inner);
  if (inner.appendMany) {
    const appendMany = inner.appendMany.bind(inner);
    store.appendMany = (appends) =>
      appendSealed(async (sealing) => {
        const sealed = await Promise.all(appends.map(async (a) => ({ ...a, events: await sealAll(a.streamId, a.events, sealing) })));
        // the keys ride with the first append: the whole call commits or none of it
        return (keys) => appendMany(keys.length ? sealed.map((a, i) => (i === 0 ? { ...a, keys } : a)) : sealed);
      });
  }
  return store;
}
