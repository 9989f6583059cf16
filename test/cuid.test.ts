import { expect } from 'chai';
import { init, isCuid } from '@paralleldrive/cuid2';
import sinon from 'sinon';
import { createId, initCuid } from '../src/cuid.js';

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

describe('initCuid (cuid2 without bignumber.js)', () => {
  it('gives exactly the ids of @paralleldrive/cuid2 for the same random source, counter, fingerprint and clock', () => {
    const clock = sinon.useFakeTimers({ now: new Date('2026-11-23T12:00:00Z') });
    try {
      const seeded = () => {
        let x = 12345;
        return () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
      };
      const ours = initCuid({ random: seeded(), counter: 42, fingerprint: 'host-fingerprint' });
      const theirs = init({ random: seeded(), counter: ((n) => () => n++)(42), fingerprint: 'host-fingerprint' });
      for (let i = 0; i < 200; i++) {
        if (i % 50 === 0) clock.tick(1234);
        expect(ours()).to.equal(theirs());
      }
    } finally {
      clock.restore();
    }
  });
});
