import { expect } from 'chai';
import { down, up } from '../../src/migrations/035_contacts_audience_index.js';
import { ensureProjection } from '../../src/projections/generations.js';
import { contactsProjection } from '../../src/projections/contacts.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

describe('migration 035: an (account_id, id) index for a campaign to all contacts', function () {
  this.timeout(60_000);
  let testDb: TestDatabase;
  before(async () => {
    testDb = await createTestDatabase();
  });
  after(async () => testDb?.drop());

  const indexes = async () => (await testDb.db('pg_indexes').where({ tablename: 'contacts_g1' }).pluck('indexname')).filter((n: string) => n.endsWith('_audience'));
  // a page of an audience with neither list nor tag, as src/read-models/contacts.ts asks for it
  const plan = async () => {
    const q = testDb.db('contacts').where('account_id', 'small').andWhere('id', '>', 'c100').orderBy('id').limit(501).select('id', 'email');
    const { rows } = await testDb.db.raw(`EXPLAIN ${q.toQuery()}`);
    return rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
  };

  it("is in a new generation's setup, and added to a live generation made before it, whose pages then come from it in order", async () => {
    await ensureProjection(testDb.db, contactsProjection);
    expect(await indexes()).to.deep.equal(['contacts_g1_audience']);
    // the live generation as an older setup made it; 20,000 contacts, one in 20 of a small account
    await down(testDb.db);
    expect(await indexes()).to.deep.equal([]);
    await testDb.db.raw(`INSERT INTO contacts_g1 (id, account_id, email, person, tags, status, upserted_status, list_ids, revision, created_at, updated_at)
      SELECT 'c' || i, CASE WHEN i % 20 = 0 THEN 'small' ELSE 'big' END, 'u' || i || '@example.org', 'p' || i, '{}', 'subscribed', 'subscribed', '{}', 1, now(), now()
      FROM generate_series(1, 20000) i`);
    await testDb.db.raw('ANALYZE contacts_g1');
    expect(await plan()).not.to.match(/contacts_g1_audience/);
    await up(testDb.db);
    expect(await indexes()).to.deep.equal(['contacts_g1_audience']);
    const after = await plan();
    expect(after).to.match(/Index Scan using contacts_g1_audience/);
    expect(after).not.to.match(/Sort/);
    // run again (another process, a retried start): nothing to do
    await up(testDb.db);
    expect(await indexes()).to.deep.equal(['contacts_g1_audience']);
  });
});
