import { expect } from 'chai';
import { createPgIdempotencyStore } from '../../../src/adapters/db/idempotency-store.js';
import { scopesOfAccount } from '../../../src/domain/idempotency/record.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';

describe('PostgreSQL Idempotency-Key records: an erased address taken out of remembered answers', function () {
  this.timeout(60_000);
  let testDb: TestDatabase;
  before(async () => {
    testDb = await createTestDatabase();
  });
  after(async () => testDb?.drop());

  const at = new Date().toISOString();
  const answer = (message: string) => ({ items: [{ status: 400, message, error: 'Bad Request' }, { status: 201, queued: true, messageLogId: 'm1' }] });
  const bodyOf = async (scope: string, key: string) => {
    const state = await createPgIdempotencyStore(testDb.db).load(scope, key);
    return state.status === 'completed' ? state.response.body : state.status;
  };

  it("changes the answers of the account's callers that quote the address, in any case, and no other", async () => {
    const store = createPgIdempotencyStore(testDb.db);
    const record = (scope: string, key: string, body: unknown) =>
      store.replace(scope, key, { status: 'absent' }, { status: 'completed', fingerprint: 'f', token: `t-${key}`, seed: 's', claimedAt: at, heldSince: at, response: { status: 200, body } });
    await record('key:h1', 'one', answer('Ann@X.org is suppressed'));
    await record('account:a1', 'two', answer('ann@x.org is suppressed'));
    await record('key:h1', 'else', answer('bob@x.org is suppressed'));
    // another account's caller, whose person of the same address is another
    await record('key:h2', 'other', answer('ann@x.org is suppressed'));
    await store.replace('key:h1', 'running', { status: 'absent' }, { status: 'in_flight', fingerprint: 'f', token: 't', seed: 's', claimedAt: at, heldSince: at });

    expect(await store.forgetAddress(scopesOfAccount('a1', ['h1']), 'ann@x.org')).to.equal(2);
    expect(await bodyOf('key:h1', 'one')).to.deep.equal(answer('an erased address is suppressed'));
    expect(await bodyOf('account:a1', 'two')).to.deep.equal(answer('an erased address is suppressed'));
    expect(await bodyOf('key:h1', 'else')).to.deep.equal(answer('bob@x.org is suppressed'));
    expect(await bodyOf('key:h2', 'other')).to.deep.equal(answer('ann@x.org is suppressed'));
    expect(await bodyOf('key:h1', 'running')).to.equal('in_flight');
    // again: nothing left to change
    expect(await store.forgetAddress(scopesOfAccount('a1', ['h1']), 'ann@x.org')).to.equal(0);
  });
});
