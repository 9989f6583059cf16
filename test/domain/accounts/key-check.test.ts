import { expect } from 'chai';
import { keyRefusal, type KeyUse, type StoredKey } from '../../../src/domain/accounts/key-check.js';

const now = new Date('2026-06-01T12:00:00.000Z');
const key: StoredKey = { revokedAt: null, expiresAt: null, ipAllowlist: [], scopes: ['send'] };
const use: KeyUse = { clientIp: '203.0.113.7', scope: 'send', at: now };

describe('API key checks (keyRefusal)', () => {
  it('accepts a live key with the scope, from any address when it has no allowlist', () => {
    expect(keyRefusal(key, use)).to.equal(null);
    expect(keyRefusal(key, { ...use, clientIp: null })).to.equal(null);
  });

  it('refuses an unknown key and a revoked one alike', () => {
    expect(keyRefusal(null, use)).to.equal('invalid');
    expect(keyRefusal({ ...key, revokedAt: new Date('2026-05-01T00:00:00Z') }, use)).to.equal('invalid');
  });

  it('refuses a key after its expiry instant, and accepts it up to that instant', () => {
    expect(keyRefusal({ ...key, expiresAt: new Date(now.getTime() - 1) }, use)).to.equal('expired');
    expect(keyRefusal({ ...key, expiresAt: new Date(now.getTime() - 60_000) }, use)).to.equal('expired');
    expect(keyRefusal({ ...key, expiresAt: now }, use)).to.equal(null);
    expect(keyRefusal({ ...key, expiresAt: new Date(now.getTime() + 1) }, use)).to.equal(null);
  });

  it('refuses an address off the allowlist, and a request whose address is unknown', () => {
    const listed = { ...key, ipAllowlist: ['198.51.100.1', '203.0.113.7'] };
    expect(keyRefusal(listed, use)).to.equal(null);
    expect(keyRefusal(listed, { ...use, clientIp: '203.0.113.8' })).to.equal('ip');
    expect(keyRefusal(listed, { ...use, clientIp: null })).to.equal('ip');
  });

  it('refuses a key without the route\'s scope', () => {
    expect(keyRefusal(key, { ...use, scope: 'sms:send' })).to.equal('scope');
    expect(keyRefusal({ ...key, scopes: ['send', 'sms:send'] }, { ...use, scope: 'sms:send' })).to.equal(null);
  });

  it('answers the most severe refusal when several apply: revoked, then expired, then address, then scope', () => {
    const bad: StoredKey = { revokedAt: now, expiresAt: new Date(now.getTime() - 1), ipAllowlist: ['198.51.100.1'], scopes: [] };
    expect(keyRefusal(bad, use)).to.equal('invalid');
    expect(keyRefusal({ ...bad, revokedAt: null }, use)).to.equal('expired');
    expect(keyRefusal({ ...bad, revokedAt: null, expiresAt: null }, use)).to.equal('ip');
    expect(keyRefusal({ ...bad, revokedAt: null, expiresAt: null, ipAllowlist: [] }, use)).to.equal('scope');
  });
});
