import { expect } from 'chai';
import { predatesSealing } from '../../../src/adapters/db/schema-history.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';

describe('predatesSealing', function () {
  this.timeout(30_000);
  const databases: TestDatabase[] = [];
  after(() => Promise.all(databases.map((d) => d.drop())));
  const database = async (migrate: boolean) => {
    const d = await createTestDatabase({ migrate });
    databases.push(d);
    return d;
  };

  it('no for a database migrated in one go, as every database made since sealing is', async () => {
    expect(await predatesSealing((await database(true)).db)).to.equal(false);
  });

  it('yes once the data keys came in a later batch than the event store', async () => {
    const { db } = await database(true);
    await db('knex_migrations').where('name', '>=', '021').update({ batch: 2 });
    expect(await predatesSealing(db)).to.equal(true);
  });

  it('no for a database never migrated', async () => {
    expect(await predatesSealing((await database(false)).db)).to.equal(false);
  });
});
