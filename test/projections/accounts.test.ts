import { expect } from 'chai';
import { accountsProjection } from '../../src/projections/accounts.js';
import { projectionSpec } from '../support/projection-spec.js';

const checks = (status: 'pending' | 'verified') => ({ dkim: status, spf: status, mailFrom: status, dnsRecords: [{ type: 'CNAME', name: 'x', value: 'y' }] });
const added = (id: string, value: string) => ({
  type: 'IdentityAdded',
  data: { id, accountId: 'a1', kind: 'domain', value, createdAt: '2026-01-01T00:00:00.000Z', ...checks('pending') },
});

describe('accounts projection: sending identities (given events, then rows)', function () {
  this.timeout(30_000);
  let spec: Awaited<ReturnType<typeof projectionSpec>>;
  beforeEach(async () => {
    spec = await projectionSpec(accountsProjection);
  });
  afterEach(async () => spec?.drop());

  const rows = async () => (await spec.rows('identities').orderBy('value')).map((r) => ({ id: r.id, value: r.value, verified: r.verified }));

  it('an added domain is a row, verified once every check is; a removed one is gone and its later checks change nothing', async () => {
    await spec.given(['identity-i1', [added('i1', 'example.com')]], ['identity-i2', [added('i2', 'example.net')]]);
    expect(await rows()).to.deep.equal([
      { id: 'i1', value: 'example.com', verified: false },
      { id: 'i2', value: 'example.net', verified: false },
    ]);
    await spec.given(['identity-i1', [{ type: 'IdentityChecked', data: { id: 'i1', accountId: 'a1', checkedAt: '2026-01-02T00:00:00.000Z', ...checks('verified') } }]]);
    expect((await rows())[0]).to.deep.equal({ id: 'i1', value: 'example.com', verified: true });

    await spec.given(['identity-i1', [{ type: 'IdentityRemoved', data: { id: 'i1', accountId: 'a1', kind: 'domain', value: 'example.com', removedAt: '2026-01-03T00:00:00.000Z' } }]]);
    expect(await rows()).to.deep.equal([{ id: 'i2', value: 'example.net', verified: false }]);

    // the same domain added again is a new identity
    await spec.given(['identity-i3', [added('i3', 'example.com')]]);
    expect(await rows()).to.deep.equal([
      { id: 'i3', value: 'example.com', verified: false },
      { id: 'i2', value: 'example.net', verified: false },
    ]);
  });
  it('a sign-out of a session not yet expired is kept (its token refused); one already expired is not', async () => {
    const out = (sessionId: string, sessionExpiresAt: string) => ({ type: 'UserSignedOut', data: { userId: 'u1', accountId: 'a1', sessionId, sessionExpiresAt, signedOutAt: '2026-01-01T00:00:00.000Z' } });
    const later = new Date(Date.now() + 3_600_000).toISOString();
    await spec.given(['user-owner@example.com', [out('s-live', later), out('s-expired', '2020-01-01T00:00:00.000Z'), out('s-live', later)]]);
    const rows = await spec.rows('ended_sessions').select('session_id', 'user_id');
    expect(rows).to.deep.equal([{ session_id: 's-live', user_id: 'u1' }]);
  });
});
