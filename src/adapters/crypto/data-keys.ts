import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { createGroupCommit } from '../../group-commit.js';
import type { KeySlot, KeyStore, WrappedKey } from '../../ports/key-store.js';
import { pooledRandomBytes } from './aes-gcm.js';
import type { MasterKey } from './master-key.js';

/** A new key as the key store keeps it: its slot, id and wrapped bytes. */
export type NewKey = KeySlot & WrappedKey;

export interface DataKey {
  id: string;
  key: Buffer;
  /** settles once the key is stored: what is sealed under it is appended after, or with it */
  stored: Promise<void>;
}

interface Unstored {
  row: NewKey;
  /** an append (or a write of its own) has taken it to store */
  claimed: boolean;
  resolve(): void;
  reject(err: unknown): void;
}

/**
 * Data keys, unwrapped and cached: the send path seals every message, and a round trip per send to
 * fetch or create a key would cost a third of its throughput. A key for a slot this process has no
 * key for is made here, with no lookup first. It is stored by the first append sealed under it
 * (`claim`), in that append's transaction where the event store can (PostgreSQL), else on its own just
 * before (`storeAlone`); other appends sealed under it meanwhile wait for `stored`. A key whose store
 * failed is dropped, never written again: the appends waiting for it seal anew under another.
 *
 * A cached key outlives its destruction in another process for at most `ttlMs`; in this process
 * `forget` drops it at once (the sealing store calls it when it reads an erasure, see
 * sealing-event-store.ts). What was opened under the keys is cached briefly too (`opened`), so the
 * several readers of one process (projections, process managers) decrypt an event once; it is dropped
 * with the keys.
 */
export function createDataKeys(deps: { store: KeyStore; master: MasterKey; max?: number; ttlMs?: number }) {
  // Short: an API process follows no log, so it learns of an erasure in another process only when its
  // cached key expires; meanwhile it would open what was erased, and seal new messages under a key
  // that is gone (their content lost).
  const options = { max: deps.max ?? 50_000, ttl: deps.ttlMs ?? 5_000 };
  const bySlot = new LRUCache<string, DataKey>(options);
  // null: known destroyed (or never ours), so a rebuild does not ask again for every event
  const byId = new LRUCache<string, { key: Buffer | null; owner?: string }>(options);
  const unstored = new Map<string, Unstored>();
  // readers of one process read an event within moments of each other
  const plaintexts = new LRUCache<string, { text: string; owner?: string }>({ max: 10_000, ttl: options.ttl });
  const ownerName = (accountId: string, person: string) => `${accountId}\n${person}`;
  const slotName = (s: KeySlot) => `${ownerName(s.accountId, s.person)}\n${s.scope}`;
  const writes = createGroupCommit<NewKey>((keys) => deps.store.store(keys), { maxBatch: 1000 });
  // Readers of different streams asking at once (an import confirming 500 contacts, each on its own
  // stream) share one lookup: a statement per stream read was a round trip per contact.
  const lookups = createGroupCommit<string[], Map<string, Buffer>>(
    async (asks) => {
      const found = await deps.store.find([...new Set(asks.flat())]);
      return asks.map(() => found);
    },
    { maxBatch: 200 },
  );

  function settle(rows: NewKey[], error?: unknown) {
    for (const row of rows) {
      const u = unstored.get(row.id);
      if (!u) continue;
      unstored.delete(row.id);
      if (error === undefined) {
        u.resolve();
        continue;
      }
      u.reject(error);
      // a failed write leaves nothing cached: the next seal makes another key
      const name = slotName(row);
      if (bySlot.get(name)?.id === row.id) bySlot.delete(name);
      byId.delete(row.id);
    }
  }

  return {
    /** The slot's key: the cached one, or a new one (not stored yet: see `claim`). */
    keyFor(slot: KeySlot): DataKey {
      const cached = bySlot.get(slotName(slot));
      if (cached) return cached;
      const id = randomUUID();
      const key = pooledRandomBytes(32);
      const u = { row: { ...slot, id, wrapped: deps.master.wrap(id, key) }, claimed: false } as Unstored;
      const stored = new Promise<void>((resolve, reject) => Object.assign(u, { resolve, reject }));
      stored.catch(() => {}); // its waiters see the failure; nobody else need
      unstored.set(id, u);
      const dataKey = { id, key, stored };
      bySlot.set(slotName(slot), dataKey);
      byId.set(id, { key, owner: ownerName(slot.accountId, slot.person) });
      return dataKey;
    },

    /**
     * Of `used`, the keys not stored yet that no one has taken to store: now the caller's, who stores
     * them before or with what it sealed under them and reports with `settled`.
     */
    claim(used: Iterable<DataKey>): NewKey[] {
      const rows: NewKey[] = [];
      for (const k of used) {
        const u = unstored.get(k.id);
        if (u && !u.claimed) {
          u.claimed = true;
          rows.push(u.row);
        }
      }
      return rows;
    },

    /** Whether `key` is still waiting to be stored by another caller than one holding `own`. */
    waitsForOthers(key: DataKey, own: NewKey[]): boolean {
      return unstored.has(key.id) && !own.some((r) => r.id === key.id);
    },

    /** Claimed keys are stored (`error` undefined) or not. */
    settled: settle,

    /** Stores claimed keys on their own (one statement for those of one turn of the event loop) and settles them. */
    async storeAlone(rows: NewKey[]): Promise<void> {
      if (rows.length === 0) return;
      try {
        await Promise.all(rows.map((r) => writes.add(r)));
      } catch (err) {
        settle(rows, err);
        throw err;
      }
      settle(rows);
    },

    /** The keys by id, null for each destroyed one: one statement for all the uncached. */
    async byIds(refs: Iterable<{ id: string; accountId?: string; person?: string }>): Promise<Map<string, Buffer | null>> {
      const out = new Map<string, Buffer | null>();
      const missing = new Map<string, string | undefined>();
      for (const { id, accountId, person } of refs) {
        const hit = byId.get(id);
        if (hit) out.set(id, hit.key);
        else missing.set(id, accountId && person ? ownerName(accountId, person) : undefined);
      }
      if (missing.size === 0) return out;
      const found = await lookups.add([...missing.keys()]);
      for (const [id, owner] of missing) {
        const wrapped = found.get(id);
        const key = wrapped ? deps.master.unwrap(id, wrapped) : null;
        byId.set(id, { key, owner });
        out.set(id, key);
      }
      return out;
    },

    /** What an event sealed under a cached key opened to, if it was opened moments ago. */
    opened(eventId: string): string | undefined {
      return plaintexts.get(eventId)?.text;
    },

    rememberOpened(eventId: string, text: string, accountId?: string, person?: string) {
      plaintexts.set(eventId, { text, owner: accountId && person ? ownerName(accountId, person) : undefined });
    },

    /** Drops every cached key of a person of an account (after an erasure), and those of unknown owner. */
    forget(accountId: string, person: string) {
      const owner = ownerName(accountId, person);
      for (const [name] of bySlot.entries()) if (name.startsWith(`${owner}\n`)) bySlot.delete(name);
      for (const [id, v] of byId.entries()) if (v.owner === owner || v.owner === undefined) byId.delete(id);
      for (const [id, v] of plaintexts.entries()) if (v.owner === owner || v.owner === undefined) plaintexts.delete(id);
    },

    /** Drops every cached key (after retention destroyed days). */
    forgetAll() {
      bySlot.clear();
      byId.clear();
      plaintexts.clear();
    },
  };
}
export type DataKeys = ReturnType<typeof createDataKeys>;
