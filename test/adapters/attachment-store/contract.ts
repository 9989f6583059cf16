import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import type { AttachmentStore } from '../../../src/ports/attachment-store.js';

/** Every promise of the AttachmentStore port; run against each adapter. */
export function attachmentStoreContract(name: string, factory: () => Promise<{ store: AttachmentStore; cleanup(): Promise<void> }>) {
  describe(`AttachmentStore contract: ${name}`, function () {
    let store: AttachmentStore;
    let cleanup: () => Promise<void>;
    const id = () => `${randomUUID()}/0`;

    before(async () => {
      ({ store, cleanup } = await factory());
    });
    after(async () => {
      await cleanup?.();
    });

    it('gives back exactly the bytes put, every byte value included, for several blobs at once', async () => {
      const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
      const large = randomBytes(3 * 1024 * 1024);
      const [a, b, c] = [id(), id(), id()];
      await store.put([{ id: a, content: all }, { id: b, content: large }, { id: c, content: Buffer.alloc(0) }]);
      const got = await store.get([a, b, c]);
      expect(got.get(a)!.equals(all)).to.equal(true);
      expect(got.get(b)!.equals(large)).to.equal(true);
      expect(got.get(c)!.length).to.equal(0);
    });

    it('leaves unknown ids out of the answer', async () => {
      const a = id();
      await store.put([{ id: a, content: Buffer.from('x') }]);
      const got = await store.get([a, id()]);
      expect([...got.keys()]).to.deep.equal([a]);
      expect((await store.get([])).size).to.equal(0);
    });

    it('keeps the first bytes when an id is put again (a retried command)', async () => {
      const a = id();
      await store.put([{ id: a, content: Buffer.from('first') }]);
      await store.put([{ id: a, content: Buffer.from('second') }]);
      expect((await store.get([a])).get(a)!.toString()).to.equal('first');
    });

    it('deletes: the bytes are gone, and the count says how many there were', async () => {
      const [a, b] = [id(), id()];
      await store.put([{ id: a, content: Buffer.from('a') }, { id: b, content: Buffer.from('b') }]);
      expect(await store.delete([a, id()])).to.equal(1);
      const got = await store.get([a, b]);
      expect(got.has(a)).to.equal(false);
      expect(got.get(b)!.toString()).to.equal('b');
      expect(await store.delete([])).to.equal(0);
    });
  });
}
