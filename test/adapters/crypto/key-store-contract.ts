import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import type { KeyStore } from '../../../src/ports/key-store.js';

const proposal = () => ({ id: randomUUID(), wrapped: randomBytes(60) });

/** Every promise of the KeyStore port; run against each adapter. */
export function keyStoreContract(name: string, factory: () => Promise<{ store: KeyStore; cleanup(): Promise<void> }>) {
  describe(`KeyStore contract: ${name}`, () => {
    let store: KeyStore;
    let cleanup: () => Promise<void>;
    let accountId: string;
    before(async () => ({ store, cleanup } = await factory()));
    after(async () => cleanup?.());
    beforeEach(() => (accountId = `acc-${randomUUID()}`));

    it('obtain stores the first proposal of a slot and answers it to every later (and same-batch) proposal, in input order', async () => {
      const slot = { accountId, person: 'p1', scope: 'profile' };
      const first = proposal();
      const [a, b, c] = await store.obtain([
        { ...slot, proposed: first },
        { ...slot, scope: '2030-01-01', proposed: proposal() },
        { ...slot, proposed: proposal() },
      ]);
      expect(a).to.deep.equal(first);
      expect(c).to.deep.equal(first);
      expect(b.id).to.not.equal(first.id);
      expect((await store.obtain([{ ...slot, proposed: proposal() }]))[0]).to.deep.equal(first);
      // another account's person of the same hash has keys of its own
      expect((await store.obtain([{ ...slot, accountId: `${accountId}-other`, proposed: proposal() }]))[0].id).to.not.equal(first.id);
    });

    it('concurrent proposals for one slot all get the one stored', async () => {
      const slot = { accountId, person: 'racer', scope: 'profile' };
      const answers = await Promise.all(Array.from({ length: 8 }, () => store.obtain([{ ...slot, proposed: proposal() }])));
      expect(new Set(answers.map(([k]) => k.id)).size).to.equal(1);
    });

    it('erase destroys every key of the person in that account only, and remembers them as erased', async () => {
      const [k1, k2, other, elsewhere] = await store.obtain([
        { accountId, person: 'gone', scope: 'profile', proposed: proposal() },
        { accountId, person: 'gone', scope: '2030-01-01', proposed: proposal() },
        { accountId, person: 'stays', scope: 'profile', proposed: proposal() },
        { accountId: `${accountId}-b`, person: 'gone', scope: 'profile', proposed: proposal() },
      ]);
      await store.erase(accountId, 'gone');
      const found = await store.find([k1.id, k2.id, other.id, elsewhere.id]);
      expect([...found.keys()].sort()).to.deep.equal([other.id, elsewhere.id].sort());
      expect(found.get(other.id)).to.deep.equal(other.wrapped);
      expect(await store.erased([{ accountId, person: 'gone' }, { accountId, person: 'stays' }, { accountId: `${accountId}-b`, person: 'gone' }])).to.deep.equal(
        new Set([`${accountId}\ngone`]),
      );
      expect(await store.holdsKeys()).to.equal(true);
    });

    it('destroyBefore takes the account’s day keys before the day, never a profile key', async () => {
      const [old, today, profile] = await store.obtain([
        { accountId, person: 'p', scope: '2020-01-01', proposed: proposal() },
        { accountId, person: 'p', scope: '2030-01-02', proposed: proposal() },
        { accountId, person: 'p', scope: 'profile', proposed: proposal() },
      ]);
      expect(await store.destroyBefore(accountId, '2030-01-02')).to.equal(1);
      expect([...(await store.find([old.id, today.id, profile.id])).keys()].sort()).to.deep.equal([today.id, profile.id].sort());
    });

    it('keeps the first verifier it is given', async () => {
      const first = await store.verifier('v1');
      expect(await store.verifier('v2')).to.equal(first);
    });
  });
}
