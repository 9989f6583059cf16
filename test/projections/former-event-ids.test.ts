import { expect } from 'chai';
import { withoutPersonalPart } from '../../src/domain/provider-events/provider-event-ids.js';
import { formerIdsWithoutPersonalPart } from '../../src/projections/former-event-ids.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { CURRENT_IDS, FORMER_IDS } from '../support/provider-event-ids.js';

/**
 * An erasure shortens the provider event ids of the read models' rows in SQL; a rebuild writes them
 * as the sealing store reads them, in JavaScript. Both must give the same, or a rebuild would not
 * give the rows the erasure left.
 */
describe('provider event ids without their personal part, in SQL as in JavaScript', function () {
  this.timeout(30_000);
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase({ migrate: false });
  });
  after(async () => database?.drop());

  it('gives every id what withoutPersonalPart gives it, again on what it gave; data without one gains nothing', async () => {
    const ids = [...FORMER_IDS.flatMap(([recorded, read]) => [recorded, read]), ...CURRENT_IDS];
    const sql = formerIdsWithoutPersonalPart();
    const { rows } = await database.db.raw(`SELECT data->>'providerEventId' AS id, ${sql.sql} AS shortened FROM (SELECT jsonb_build_object('providerEventId', x) AS data FROM unnest(?::text[]) x) s`, [
      ...sql.bindings,
      ids,
    ]);
    expect(rows.map((r: any) => [r.id, r.shortened.providerEventId])).to.deep.equal(ids.map((id) => [id, withoutPersonalPart(id)]));
    const none = await database.db.raw(`SELECT ${sql.sql} AS shortened FROM (SELECT '{"providerEventId": null, "a": 1}'::jsonb AS data UNION ALL SELECT '{}'::jsonb) s`, sql.bindings);
    expect(none.rows.map((r: any) => r.shortened)).to.deep.equal([{}, {}]);
  });
});
