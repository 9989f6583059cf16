import { expect } from 'chai';
import type { Knex } from 'knex';
import { down, up } from '../../src/migrations/036_contacts_changed_index.js';
import { ensureProjection } from '../../src/projections/generations.js';
import { contactsProjection } from '../../src/projections/contacts.js';
import { audienceChangedSince } from '../../src/read-models/contacts.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

describe('migration 036: an (account_id, updated_at, id) index for a campaign\'s late walk', function () {
  this.timeout(60_000);
  let testDb: TestDatabase;
  before(async () => {
    testDb = await createTestDatabase();
  });
  after(async () => testDb?.drop());

  const indexes = async () => (await testDb.db('pg_indexes').where({ tablename: 'contacts_g1' }).pluck('indexname')).filter((n: string) => n.endsWith('_changed'));
  // a page of the late walk over a list's contacts, all changed since the fan-out began (imported just before it)
  const plan = async () => {
    const since = new Date(Date.now() - 3_600_000).toISOString();
    // the read model's own query (a query builder, typed as the rows it resolves to)
    const q = audienceChangedSince(testDb.db, 'small', { listId: 'news' }, since, { changedAt: since, id: '' }, 501) as unknown as Knex.QueryBuilder;
    const { rows } = await testDb.db.raw(`EXPLAIN ${q.toQuery()}`);
    return rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
  };

  it("is in a new generation's setup, and added to a live generation made before it, whose pages then come from it in order", async () => {
    await ensureProjection(testDb.db, contactsProjection);
    expect(await indexes()).to.deep.equal(['contacts_g1_changed']);
    await down(testDb.db);
    expect(await indexes()).to.deep.equal([]);
    await testDb.db.raw(`INSERT INTO contacts_g1 (id, account_id, email, person, tags, status, upserted_status, list_ids, revision, created_at, updated_at)
      SELECT 'c' || i, CASE WHEN i % 2 = 0 THEN 'small' ELSE 'big' END, 'u' || i || '@example.org', 'p' || i, '{}', 'subscribed', 'subscribed', '{news}', 1, now(), now() - (i || ' ms')::interval
      FROM generate_series(1, 40000) i`);
    await testDb.db.raw('ANALYZE contacts_g1');
    expect(await plan()).to.match(/Sort/);
    await up(testDb.db);
    expect(await indexes()).to.deep.equal(['contacts_g1_changed']);
    const after = await plan();
    expect(after).to.match(/Index Scan using contacts_g1_changed/);
    expect(after).not.to.match(/Sort/);
    await up(testDb.db);
    expect(await indexes()).to.deep.equal(['contacts_g1_changed']);
  });
});
