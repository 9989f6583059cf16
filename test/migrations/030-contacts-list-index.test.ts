import { expect } from 'chai';
import { down, up } from '../../src/migrations/030_contacts_list_index.js';
import { ensureProjection } from '../../src/projections/generations.js';
import { contactsProjection } from '../../src/projections/contacts.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

describe('migration 030: a GIN index for the contacts list filter by listId', function () {
  this.timeout(60_000);
  let testDb: TestDatabase;
  before(async () => {
    testDb = await createTestDatabase();
  });
  after(async () => testDb?.drop());

  const indexes = async () => (await testDb.db('pg_indexes').where({ tablename: 'contacts_g1' }).pluck('indexname')).filter((n: string) => n.endsWith('_lists'));
  const plan = async () => {
    const q = testDb.db('contacts').where({ account_id: 'acc1' }).andWhereRaw('list_ids @> ARRAY[?]::text[]', ['rare']).count('* as n');
    const { rows } = await testDb.db.raw(`EXPLAIN ${q.toQuery()}`);
    return rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
  };

  it("is in a new generation's setup, and added to a live generation made before it, which then filters through it", async () => {
    await ensureProjection(testDb.db, contactsProjection);
    expect(await indexes()).to.deep.equal(['contacts_g1_lists']);
    // the live generation as an older setup made it; 20,000 contacts, 20 in the list asked for
    await down(testDb.db);
    expect(await indexes()).to.deep.equal([]);
    await testDb.db.raw(`INSERT INTO contacts_g1 (id, account_id, email, person, tags, status, upserted_status, list_ids, revision, created_at, updated_at)
      SELECT 'c' || i, 'acc1', 'u' || i || '@example.org', 'p' || i, '{}', 'subscribed', 'subscribed',
        CASE WHEN i % 1000 = 0 THEN ARRAY['rare'] ELSE ARRAY['list' || (i % 20)] END, 1, now(), now()
      FROM generate_series(1, 20000) i`);
    await testDb.db.raw('ANALYZE contacts_g1');
    expect(await plan()).to.match(/Seq Scan on contacts_g1/);
    await up(testDb.db);
    expect(await indexes()).to.deep.equal(['contacts_g1_lists']);
    expect(await plan()).to.match(/Bitmap Index Scan on contacts_g1_lists/);
    // run again (another process, a retried start): nothing to do
    await up(testDb.db);
    expect(await indexes()).to.deep.equal(['contacts_g1_lists']);
  });
});
