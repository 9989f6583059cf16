import { expect } from 'chai';
import { throttled } from '../../src/domain/errors.js';

describe('a throttled refusal', () => {
  it('says when to come back in words and in Retry-After (whole seconds, rounded up)', () => {
    const cases: [number, string, string][] = [
      [1, 'try again in 1 second', '1'],
      [29_100, 'try again in 30 seconds', '30'],
      [60_000, 'try again in 1 minute', '60'],
      [61_000, 'try again in 2 minutes', '61'],
      [898_000, 'try again in 15 minutes', '898'],
    ];
    for (const [ms, words, header] of cases) {
      const err = throttled('too many', ms);
      expect(err.status).to.equal(429);
      expect(err.message).to.equal(`too many; ${words}`);
      expect(err.headers).to.deep.equal({ 'Retry-After': header });
    }
  });
});
