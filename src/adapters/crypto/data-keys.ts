import { randomBytes, randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { createGroupCommit } from '../../group-commit.js';
import type { KeySlot, KeyStore } from '../../ports/key-store.js';
import type { MasterKey } from './master-key.js';

export interface DataKey {
  id: string;
  key: Buffer;
  /** settles once the key is stored: what is sealed under it is appended after */
  stored: Promise<void>;
}

/**
 * Data keys, unwrapped and cached: the send path seals every message, and a round trip per send to
 * fetch or create a key would cost a third of its throughput. A key for a slot this process has no
 * key for is made here, with no lookup first, and stored before the append of what is sealed under it
 * (the keys made in one turn of the event loop in one statement). A cached key outlives its destruction in another process for at most
 * `ttlMs`; in this process `forget` drops it at once (the sealing store calls it when it reads an
 * erasure, see sealing-event-store.ts).
 */
export function createDataKeys(deps: { store: KeyStore; master: MasterKey; max?: number; ttlMs?: number }) {
  const options = { max: deps.max ?? 50_000, ttl: deps.ttlMs ?? 60_000 };
  const bySlot = new LRUCache<string, DataKey>(options);
  // null: known destroyed (or never ours), so a rebuild does not ask again for every event
  const byId = new LRUCache<string, { key: Buffer | null; owner?: string }>(options);
  const ownerName = (accountId: string, person: string) => `${accountId}\n${person}`;
  const slotName = (s: KeySlot) => `${ownerName(s.accountId, s.person)}\n${s.scope}`;
  const writes = createGroupCommit<KeySlot & { id: string; wrapped: Buffer }>((keys) => deps.store.store(keys), { maxBatch: 1000 });

  return {
    /** The slot's key: the cached one, or a new one (being stored). */
    keyFor(slot: KeySlot): DataKey {
      const cached = bySlot.get(slotName(slot));
      if (cached) return cached;
      const id = randomUUID();
      const key = randomBytes(32);
      const stored = writes.add({ ...slot, id, wrapped: deps.master.wrap(id, key) });
      const dataKey = { id, key, stored };
      // a failed write leaves nothing cached: the next send makes another key
      stored.catch(() => bySlot.get(slotName(slot)) === dataKey && bySlot.delete(slotName(slot)));
      bySlot.set(slotName(slot), dataKey);
      byId.set(id, { key, owner: ownerName(slot.accountId, slot.person) });
      return dataKey;
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
      const found = await deps.store.find([...missing.keys()]);
      for (const [id, owner] of missing) {
        const wrapped = found.get(id);
        const key = wrapped ? deps.master.unwrap(id, wrapped) : null;
        byId.set(id, { key, owner });
        out.set(id, key);
      }
      return out;
    },

    /** Drops every cached key of a person of an account (after an erasure), and those of unknown owner. */
    forget(accountId: string, person: string) {
      const owner = ownerName(accountId, person);
      for (const [name] of bySlot.entries()) if (name.startsWith(`${owner}\n`)) bySlot.delete(name);
      for (const [id, v] of byId.entries()) if (v.owner === owner || v.owner === undefined) byId.delete(id);
    },

    /** Drops every cached key (after retention destroyed days). */
    forgetAll() {
      bySlot.clear();
      byId.clear();
    },
  };
}
export type DataKeys = ReturnType<typeof createDataKeys>;
