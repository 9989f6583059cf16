import { expect } from 'chai';
import { createGroupCommit } from '../../../src/adapters/queue/group-commit.js';

describe('group commit (batched enqueue and completion writes)', () => {
  it('writes what is added in one turn as one batch, and what arrives during a write as the next', async () => {
    const batches: number[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const g = createGroupCommit<number>(async (items) => {
      batches.push(items);
      if (batches.length === 1) await gate;
    });
    const first = [1, 2, 3].map((n) => g.add(n));
    await new Promise((r) => setImmediate(r));
    expect(batches).to.deep.equal([[1, 2, 3]]);
    const second = [4, 5].map((n) => g.add(n));
    await new Promise((r) => setTimeout(r, 10));
    expect(batches).to.have.length(1); // still writing the first batch
    release();
    await Promise.all([...first, ...second]);
    expect(batches).to.deep.equal([
      [1, 2, 3],
      [4, 5],
    ]);
  });

  it('a failed write rejects every add of its batch and no other; drain waits for all writes', async () => {
    const written: string[] = [];
    const g = createGroupCommit<string>(async (items) => {
      if (items.includes('bad')) throw new Error('refused');
      await new Promise((r) => setTimeout(r, 5));
      written.push(...items);
    });
    const failing = [g.add('a'), g.add('bad')].map((p) => p.then(() => 'ok', (e: Error) => e.message));
    expect(await Promise.all(failing)).to.deep.equal(['refused', 'refused']);
    const later = g.add('c');
    await g.drain();
    expect(written).to.deep.equal(['c']);
    await later;
  });
});
