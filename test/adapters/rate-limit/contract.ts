import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { RateLimit, RateLimiters } from '../../../src/ports/rate-limiter.js';

/**
 * Every promise of the RateLimiter port; run against each adapter. `open` gives a new handle on the same
 * store each call, as another API process would have.
 */
export function rateLimiterContract(name: string, factory: () => Promise<{ open(): RateLimiters; cleanup(): Promise<void> }>) {
  describe(`RateLimiter contract: ${name}`, function () {
    let open: () => RateLimiters;
    let cleanup: () => Promise<void>;
    const opened: RateLimiters[] = [];
    const store = () => {
      const s = open();
      opened.push(s);
      return s;
    };
    // A limit of its own per test, so tests can share a store.
    let limit: RateLimit;

    before(async () => {
      ({ open, cleanup } = await factory());
    });
    after(async () => {
      for (const s of opened) await s.close();
      await cleanup?.();
    });
    beforeEach(() => {
      limit = { name: `t${randomUUID().slice(0, 8)}`, points: 3, windowSeconds: 600 };
    });

    it('allows `points` attempts in the window, then refuses with the time until it closes', async () => {
      const limiter = store().limiter(limit);
      const answers = [];
      for (let i = 0; i < 5; i++) answers.push(await limiter.take('k'));
      expect(answers.slice(0, 3)).to.deep.equal([{ allowed: true }, { allowed: true }, { allowed: true }]);
      for (const refused of answers.slice(3)) {
        expect(refused.allowed).to.equal(false);
        const { retryAfterMs } = refused as { retryAfterMs: number };
        expect(retryAfterMs).to.be.greaterThan(0).and.at.most(600_000);
      }
    });

    it('counts keys apart, and limits with different names apart', async () => {
      const limiter = store().limiter(limit);
      const other = store().limiter({ ...limit, name: `${limit.name}-other` });
      for (let i = 0; i < 3; i++) await limiter.take('a');
      expect((await limiter.take('a')).allowed).to.equal(false);
      expect((await limiter.take('b')).allowed).to.equal(true);
      expect((await other.take('a')).allowed).to.equal(true);
    });

    it('gives back one attempt', async () => {
      const limiter = store().limiter(limit);
      for (let i = 0; i < 3; i++) await limiter.take('k');
      await limiter.giveBack('k');
      expect((await limiter.take('k')).allowed).to.equal(true);
      expect((await limiter.take('k')).allowed).to.equal(false);
    });

    it('clears a key: its attempts are forgotten', async () => {
      const limiter = store().limiter(limit);
      for (let i = 0; i < 4; i++) await limiter.take('k');
      await limiter.clear('k');
      expect((await limiter.take('k')).allowed).to.equal(true);
      await limiter.clear('never-taken');
    });

    it('allows exactly `points` of many attempts made at once', async () => {
      const limiter = store().limiter({ ...limit, points: 5 });
      const answers = await Promise.all(Array.from({ length: 30 }, () => limiter.take('k')));
      expect(answers.filter((a) => a.allowed)).to.have.length(5);
    });

    it('shares the counts between handles on the same store (API processes)', async () => {
      const first = store().limiter(limit);
      const second = store().limiter(limit);
      await first.take('k');
      await second.take('k');
      await first.take('k');
      expect((await second.take('k')).allowed).to.equal(false);
      await second.clear('k');
      expect((await first.take('k')).allowed).to.equal(true);
    });

    it('takes keys of any length and characters (hashes, IPv6 addresses)', async () => {
      const limiter = store().limiter(limit);
      const long = `${'x'.repeat(400)}:2001:db8::1:é`;
      for (let i = 0; i < 3; i++) expect((await limiter.take(long)).allowed).to.equal(true);
      expect((await limiter.take(long)).allowed).to.equal(false);
    });
  });
}
