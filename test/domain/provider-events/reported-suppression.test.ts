import { expect } from 'chai';
import { reportedSuppression } from '../../../src/domain/provider-events/reported-suppression.js';

const facts = { messageTo: 'reader@example.org', person: 'hash-of-reader', reported: 'Reader@example.org', detail: '550 5.1.1 <reader@example.org> unknown', erased: false };

describe('whom an admitted bounce or complaint suppresses', () => {
  it('the address the report names, with its diagnostic, while the message’s address can be read', () => {
    expect(reportedSuppression(facts)).to.deep.equal({ email: 'Reader@example.org', detail: facts.detail });
    // an erasure since (the message not yet redacted as read) changes nothing: the address is still on the message
    expect(reportedSuppression({ ...facts, erased: true })).to.deep.equal({ email: 'Reader@example.org', detail: facts.detail });
  });

  it('an erased person: the keyed hash alone, and no diagnostic (it may quote the address, and nothing would seal it)', () => {
    expect(reportedSuppression({ ...facts, messageTo: null, erased: true })).to.deep.equal({ person: 'hash-of-reader', detail: null });
  });

  it('a message past retention whose person was not erased: the reported address, as for any bounce (retention forgets content, not suppressions)', () => {
    expect(reportedSuppression({ ...facts, messageTo: null })).to.deep.equal({ email: 'Reader@example.org', detail: facts.detail });
  });
});
