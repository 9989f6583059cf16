import { expect } from 'chai';
import { categoryOf, decodeNotice, encodeNotice, mayMatch } from '../../../src/adapters/eventstore/commit-notice.js';

describe('commit notices (which subscribers a commit wakes)', () => {
  it('a category is the stream id up to its first dash', () => {
    expect(categoryOf('message-abc-def')).to.equal('message-');
    expect(categoryOf('plain')).to.equal('plain');
  });

  it('never says no to a subscriber whose prefix matches a committed stream', () => {
    const streams = ['message-m1', 'delivery-d1', 'suppression-a1-x@example.org', 'contact-a1-y@example.org', 'solo'];
    const prefixes = ['message-', 'mess', 'message-m', 'delivery-', 'suppression-a1-', 'contact-a1-y@', 'solo', 'so', 'contact-'];
    for (const stream of streams) {
      for (const prefix of prefixes) {
        if (stream.startsWith(prefix)) expect(mayMatch([prefix], [categoryOf(stream)]), `${prefix} / ${stream}`).to.equal(true);
      }
    }
  });

  it('says no when no followed prefix can match, yes with no prefixes or no categories', () => {
    expect(mayMatch(['message-'], ['delivery-', 'contact-'])).to.equal(false);
    expect(mayMatch(['suppression-', 'contact-'], ['contact-'])).to.equal(true);
    expect(mayMatch(undefined, ['delivery-'])).to.equal(true);
    expect(mayMatch(['message-'], undefined)).to.equal(true);
  });

  it('round-trips instance and categories; too many categories or an empty payload name none', () => {
    expect(decodeNotice(encodeNotice('i1', ['message-', 'delivery-']))).to.deep.equal({ instance: 'i1', categories: ['message-', 'delivery-'] });
    const many = Array.from({ length: 2000 }, (_, i) => `cat${i}-`);
    expect(decodeNotice(encodeNotice('i1', many))).to.deep.equal({ instance: 'i1', categories: undefined });
    expect(decodeNotice('')).to.deep.equal({ instance: undefined, categories: undefined });
  });
});
