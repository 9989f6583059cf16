import { expect } from 'chai';
import { createPgAttachmentStore } from '../../../src/adapters/db/attachment-store.js';
import type { AttachmentStore } from '../../../src/ports/attachment-store.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';

const bytes = (n: number, seed: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 131 + seed) & 0xff));

describe('attachment store in PostgreSQL', () => {
  let t: TestDatabase;
  let store: AttachmentStore;
  before(async () => {
    t = await createTestDatabase();
    store = createPgAttachmentStore(t.db);
  });
  after(() => t.drop());

  it('gives back the bytes put, a megabyte and an empty blob included; unknown ids are absent', async () => {
    const big = bytes(1024 * 1024, 3);
    await store.put([
      { id: 'm1/0', content: big },
      { id: 'm1/1', content: bytes(10, 0) },
      { id: 'm1/2', content: Buffer.alloc(0) },
    ]);
    const got = await store.get(['m1/0', 'm1/1', 'm1/2', 'nope']);
    expect([...got.keys()].sort()).to.deep.equal(['m1/0', 'm1/1', 'm1/2']);
    expect(got.get('m1/0')!.equals(big)).to.equal(true);
    expect(got.get('m1/1')!.equals(bytes(10, 0))).to.equal(true);
    expect(got.get('m1/2')!.length).to.equal(0);
  });

  it('keeps the first bytes of an id put again, and deletes what is asked, counting what was there', async () => {
    await store.put([{ id: 'm2/0', content: bytes(5, 1) }]);
    await store.put([{ id: 'm2/0', content: bytes(5, 2) }]);
    expect((await store.get(['m2/0'])).get('m2/0')!.equals(bytes(5, 1))).to.equal(true);
    expect(await store.delete(['m2/0', 'never'])).to.equal(1);
    expect((await store.get(['m2/0'])).size).to.equal(0);
    expect(await store.delete([])).to.equal(0);
  });
});
