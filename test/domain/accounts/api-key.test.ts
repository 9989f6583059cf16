import { expect } from 'chai';
import { apiKeyDecider, type ApiKeyCreated } from '../../../src/domain/accounts/api-key.js';
import { AppError } from '../../../src/domain/errors.js';
import { given } from '../../support/given.js';

const created: ApiKeyCreated['data'] = {
  id: 'k1',
  accountId: 'a1',
  name: 'ci',
  keyHash: 'h',
  prefix: 'cl_abc',
  scopes: ['send'],
  expiresAt: null,
  ipAllowlist: [],
  dailyLimit: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  createdBy: 'user:u1',
};

describe('API key decisions', () => {
  it('creates a key', () => {
    const events = given(apiKeyDecider).when({ kind: 'create', accountDailyCap: 1000, ...created });
    expect(events).to.deep.equal([{ type: 'ApiKeyCreated', data: created }]);
  });

  it('refuses a dailyLimit that is not lower than the account cap', () => {
    for (const dailyLimit of [1000, 5000]) {
      expect(() => given(apiKeyDecider).when({ kind: 'create', accountDailyCap: 1000, ...created, dailyLimit }))
        .to.throw(AppError, /lower than the account daily send cap/)
        .with.property('status', 400);
    }
    expect(given(apiKeyDecider).when({ kind: 'create', accountDailyCap: 1000, ...created, dailyLimit: 999 })).to.have.length(1);
  });

  it('refuses an expiry that is not after the creation instant', () => {
    for (const expiresAt of ['2025-12-31T23:59:59.999Z', created.createdAt]) {
      expect(() => given(apiKeyDecider).when({ kind: 'create', accountDailyCap: 1000, ...created, expiresAt }))
        .to.throw(AppError, `expiresAt must be in the future (it is ${expiresAt})`)
        .with.property('status', 400);
    }
    const later = '2026-01-01T00:00:00.001Z';
    expect(given(apiKeyDecider).when({ kind: 'create', accountDailyCap: 1000, ...created, expiresAt: later })).to.have.length(1);
  });

  it('revokes once; revoking again appends nothing', () => {
    const revoke = { kind: 'revoke' as const, id: 'k1', accountId: 'a1', now: '2026-01-02T00:00:00.000Z', by: 'user:u1' };
    const events = given(apiKeyDecider, [{ type: 'ApiKeyCreated', data: created }]).when(revoke);
    expect(events).to.deep.equal([{ type: 'ApiKeyRevoked', data: { id: 'k1', revokedAt: revoke.now, revokedBy: 'user:u1' } }]);
    expect(given(apiKeyDecider, [{ type: 'ApiKeyCreated', data: created }, ...events]).when(revoke)).to.deep.equal([]);
  });

  it("reports another account's key as not found", () => {
    expect(() =>
      given(apiKeyDecider, [{ type: 'ApiKeyCreated', data: created }]).when({ kind: 'revoke', id: 'k1', accountId: 'other', now: 'x', by: 'u' }),
    )
      .to.throw(AppError)
      .with.property('status', 404);
    expect(() => given(apiKeyDecider).when({ kind: 'revoke', id: 'k1', accountId: 'a1', now: 'x', by: 'u' }))
      .to.throw(AppError)
      .with.property('status', 404);
  });
});
