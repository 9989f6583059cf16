import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import type { KeyStore } from '../../../src/ports/key-store.js';

const key = (accountId: string, person: string, scope: string) => ({ accountId, person, scope, id: randomUUID(), wrapped: randomBytes(60) });

/** Every promise of the KeyStore port; run against each adapter. */
export function keyStoreContract(name: string, factory: () => Promise<{ store: KeyStore; cleanup(): Promise<void> }>) {
  describe(`KeyStore contract: ${name}`, () => {
    let store: KeyStore;
    let cleanup: () => Promise<void>;
    let accountId: string;
    before(async () => ({ store, cleanup } = await factory()));
    after(async () => cleanup?.());
    beforeEach(() => (accountId = `acc-${randomUUID()}`));

    it('stores keys, several to a slot, and finds them by id (an unknown id is absent)', async () => {
      const a = key(accountId, 'p1', 'profile');
      const b = key(accountId, 'p1', 'profile');
      await store.store([a, b]);
      await store.store([]);
      const found = await store.find([a.id, b.id, randomUUID()]);
      expect([...found.keys()].sort()).to.deep.equal([a.id, b.id].sort());
      expect(found.get(a.id)).to.deep.equal(a.wrapped);
      expect(await store.find([])).to.deep.equal(new Map());
    });

    it('erase destroys every key of the person in that account only, and remembers them as erased', async () => {
      const [k1, k2, other, elsewhere] = [
        key(accountId, 'gone', 'profile'),
        key(accountId, 'gone', '2030-01-01'),
        key(accountId, 'stays', 'profile'),
        key(`${accountId}-b`, 'gone', 'profile'),
      ];
      await store.store([k1, k2, other, elsewhere]);
      await store.erase(accountId, 'gone');
      const found = await store.find([k1.id, k2.id, other.id, elsewhere.id]);
      expect([...found.keys()].sort()).to.deep.equal([other.id, elsewhere.id].sort());
      expect(found.get(other.id)).to.deep.equal(other.wrapped);
      expect(await store.erased([{ accountId, person: 'gone' }, { accountId, person: 'stays' }, { accountId: `${accountId}-b`, person: 'gone' }])).to.deep.equal(
        new Set([`${accountId}\ngone`]),
      );
      expect(await store.holdsKeys()).to.equal(true);
    });

    it('holds tells whether a person of an account has a key: not once erased, again once one is stored', async () => {
      await store.store([key(accountId, 'p', '2030-01-01')]);
      expect(await store.holds(accountId, 'p')).to.equal(true);
      expect(await store.holds(accountId, 'nobody')).to.equal(false);
      expect(await store.holds(`${accountId}-b`, 'p')).to.equal(false);
      await store.erase(accountId, 'p');
      expect(await store.holds(accountId, 'p')).to.equal(false);
      await store.store([key(accountId, 'p', 'profile')]);
      expect(await store.holds(accountId, 'p')).to.equal(true);
    });

    it('destroyBefore takes the account’s day keys before the day, never a profile key', async () => {
      const [old, today, profile] = [key(accountId, 'p', '2020-01-01'), key(accountId, 'p', '2030-01-02'), key(accountId, 'p', 'profile')];
      await store.store([old, today, profile]);
      expect(await store.destroyBefore(accountId, '2030-01-02')).to.equal(1);
      expect([...(await store.find([old.id, today.id, profile.id])).keys()].sort()).to.deep.equal([today.id, profile.id].sort());
    });

    it('keeps the first verifier it is given', async () => {
      const first = await store.verifier('v1');
      expect(await store.verifier('v2')).to.equal(first);
    });
  });
}
