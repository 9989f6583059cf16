import { randomBytes, randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { createGroupCommit } from '../../group-commit.js';
import type { KeySlot, KeyStore } from '../../ports/key-store.js';
import type { MasterKey } from './master-key.js';

export interface DataKey {
  id: string;
  key: Buffer;
}

/**
 * Unwrapped data keys, cached: the send path seals every message, and a round trip per send to fetch
 * or create a key would halve its throughput. Keys asked for together (the sends of one turn of the
 * event loop) are created in one statement. A cached key outlives its destruction in another process
 * for at most `ttlMs`; in this process `forget` drops it at once (the store calls it when an erasure
 * passes through, see sealing-event-store.ts).
 */
export function createDataKeys(deps: { store: KeyStore; master: MasterKey; max?: number; ttlMs?: number }) {
  const options = { max: deps.max ?? 50_000, ttl: deps.ttlMs ?? 60_000 };
  const bySlot = new LRUCache<string, DataKey>(options);
  // null: known destroyed (or never ours), so a rebuild does not ask again for every event
  const byId = new LRUCache<string, { key: Buffer | null; owner?: string }>(options);
  const ownerName = (accountId: string, person: string) => `${accountId}\n${person}`;
  const slotName = (s: KeySlot) => `${ownerName(s.accountId, s.person)}\n${s.scope}`;

  const creations = createGroupCommit<KeySlot, DataKey>(async (slots) => {
    const proposed = slots.map((s) => {
      const id = randomUUID();
      return { ...s, proposed: { id, wrapped: deps.master.wrap(id, randomBytes(32)) } };
    });
    const stored = await deps.store.obtain(proposed);
    return stored.map((k, i) => {
      const key = deps.master.unwrap(k.id, k.wrapped);
      if (!key) throw new Error('a stored data key does not open with ENCRYPTION_KEY');
      const dataKey = { id: k.id, key };
      bySlot.set(slotName(slots[i]), dataKey);
      byId.set(k.id, { key, owner: ownerName(slots[i].accountId, slots[i].person) });
      return dataKey;
    });
  }, { maxBatch: 1000 });

  return {
    /** The slot's key, created on first use. */
    keyFor(slot: KeySlot): Promise<DataKey> | DataKey {
      return bySlot.get(slotName(slot)) ?? creations.add(slot);
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
