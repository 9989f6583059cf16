import type { KeyStore, WrappedKey } from '../../ports/key-store.js';

/** A key store in memory: for tests and benches that need no database. */
export function createMemoryKeyStore(): KeyStore {
  const keys = new Map<string, WrappedKey & { accountId: string; person: string; scope: string }>();
  const erasedPeople = new Set<string>();
  let verifier: string | undefined;
  return {
    async store(stored) {
      for (const k of stored) keys.set(k.id, { ...k });
    },
    async find(ids) {
      const wanted = new Set(ids);
      return new Map([...keys.values()].filter((k) => wanted.has(k.id)).map((k) => [k.id, k.wrapped]));
    },
    async erase(accountId, person) {
      erasedPeople.add(`${accountId}\n${person}`);
      for (const [k, v] of keys) if (v.accountId === accountId && v.person === person) keys.delete(k);
    },
    async holds(accountId, person) {
      return [...keys.values()].some((k) => k.accountId === accountId && k.person === person);
    },
    async erased(people) {
      return new Set(people.map((p) => `${p.accountId}\n${p.person}`).filter((p) => erasedPeople.has(p)));
    },
    async destroyBefore(accountId, day) {
      let n = 0;
      for (const [k, v] of keys) {
        if (v.accountId === accountId && /^\d{4}-/.test(v.scope) && v.scope < day) {
          keys.delete(k);
          n++;
        }
      }
      return n;
    },
    async verifier(proposed) {
      verifier ??= proposed;
      return verifier;
    },
    async holdsKeys() {
      return verifier !== undefined || keys.size > 0 || erasedPeople.size > 0;
    },
  };
}
