import { expect } from 'chai';
import { createGroupCommit, ItemFailure } from '../src/group-commit.js';

describe('group commit (many round trips as one)', () => {
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

  it('answers each add with its own result, rejects only the items the write marks as failed', async () => {
    const g = createGroupCommit<number, number>(async (items) => items.map((n) => (n < 0 ? new ItemFailure(new Error(`negative ${n}`)) : n * 10)));
    const settled = await Promise.allSettled([g.add(1), g.add(-2), g.add(3)]);
    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message))).to.deep.equal([10, 'negative -2', 30]);
  });

  it('sends no more than maxBatch items in one write', async () => {
    const batches: number[][] = [];
    const g = createGroupCommit<number>(async (items) => {
      batches.push(items);
    }, { maxBatch: 2 });
    await Promise.all([1, 2, 3, 4, 5].map((n) => g.add(n)));
    expect(batches).to.deep.equal([[1, 2], [3, 4], [5]]);
  });
});
