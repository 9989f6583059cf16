import { expect } from 'chai';
import { isCuid } from '@paralleldrive/cuid2';
import { createId } from '../src/cuid.js';

describe('createId (cuid2 with a buffered random source)', () => {
  it('gives cuid2 ids: 24 characters, a letter first, no repeats across many buffer refills', () => {
    const ids = Array.from({ length: 5000 }, () => createId());
    for (const id of ids) {
      expect(isCuid(id), id).to.equal(true);
      expect(id).to.match(/^[a-z][0-9a-z]{23}$/);
    }
    expect(new Set(ids).size).to.equal(ids.length);
    // the first letters come from the random source: all 26 show up, none dominates
    const firsts = new Map<string, number>();
    for (const id of ids) firsts.set(id[0], (firsts.get(id[0]) ?? 0) + 1);
    expect(firsts.size).to.equal(26);
    expect(Math.max(...firsts.values())).to.be.below(400);
  });
});
