import { expect } from 'chai';
import { down, up } from '../../src/migrations/034_idempotency_response_json.js';
import { createPgIdempotencyStore } from '../../src/adapters/db/idempotency-store.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

describe('migration 034: idempotency responses kept as the text they were answered with', function () {
  this.timeout(60_000);
  let testDb: TestDatabase;
  before(async () => {
    testDb = await createTestDatabase();
  });
  after(async () => testDb?.drop());

  const at = new Date().toISOString();
  const claim = { fingerprint: 'f', token: 't', seed: 's', claimedAt: at, heldSince: at };
  const body = { queued: true, messageLogId: 'm1', segments: 1, encoding: 'gsm7' };

  it('a row written as jsonb before it still replays its body; one written after keeps its key order', async () => {
    await down(testDb.db);
    await testDb.db('idempotency_keys').insert({
      scope: 'key:a', key: 'old', fingerprint: 'f', status: 'completed', token: 't', seed: 's',
      claimed_at: at, held_since: at, response_status: 201, response_body: JSON.stringify(body),
    });
    await up(testDb.db);
    const store = createPgIdempotencyStore(testDb.db);
    const old = await store.load('key:a', 'old');
    expect(old).to.deep.include({ status: 'completed', response: { status: 201, body } });

    expect(await store.replace('key:a', 'new', { status: 'absent' }, { status: 'completed', ...claim, response: { status: 201, body } })).to.equal(true);
    const kept = await store.load('key:a', 'new');
    expect(kept.status === 'completed' && JSON.stringify(kept.response.body)).to.equal(JSON.stringify(body));
  });
});
