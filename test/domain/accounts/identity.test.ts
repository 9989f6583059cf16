import { expect } from 'chai';
import { identityDecider, type IdentityChecks } from '../../../src/domain/accounts/identity.js';
import { AppError } from '../../../src/domain/errors.js';
import { given } from '../../support/given.js';

const checks: IdentityChecks = { dkim: 'verified', spf: 'verified', mailFrom: 'verified', dnsRecords: [] };
const added = { type: 'IdentityAdded', data: { id: 'i1', accountId: 'a1', kind: 'domain', value: 'example.com', createdAt: '2026-01-01T00:00:00.000Z', ...checks } };
const remove = { kind: 'remove' as const, id: 'i1', accountId: 'a1', now: '2026-02-01T00:00:00.000Z' };
const removed = { type: 'IdentityRemoved', data: { id: 'i1', accountId: 'a1', kind: 'domain', value: 'example.com', removedAt: remove.now } };

describe('identity decisions', () => {
  it('given an added domain, when it is removed, then IdentityRemoved naming it', () => {
    expect(given(identityDecider, [added]).when(remove)).to.deep.equal([removed]);
  });

  it("refuses to remove another account's identity, one never added, or one already removed (404)", () => {
    for (const [history, command] of [
      [[added], { ...remove, accountId: 'a2' }],
      [[], remove],
      [[added, removed], remove],
    ] as const) {
      expect(() => given(identityDecider, [...history]).when(command))
        .to.throw(AppError, 'identity not found')
        .with.property('status', 404);
    }
  });

  it('a removed identity is checked no more (404)', () => {
    expect(() => given(identityDecider, [added, removed]).when({ kind: 'check', id: 'i1', accountId: 'a1', now: remove.now, checks }))
      .to.throw(AppError, 'identity not found')
      .with.property('status', 404);
  });

  it('given an added identity, when it is checked, then IdentityChecked with the new checks', () => {
    const pending = { ...checks, dkim: 'pending' as const };
    expect(given(identityDecider, [added]).when({ kind: 'check', id: 'i1', accountId: 'a1', now: remove.now, checks: pending })).to.deep.equal([
      { type: 'IdentityChecked', data: { id: 'i1', accountId: 'a1', checkedAt: remove.now, ...pending } },
    ]);
  });
});
