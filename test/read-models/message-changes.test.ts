import { expect } from 'chai';
import { ensureProjection } from '../../src/projections/generations.js';
import { messageChangesProjection } from '../../src/projections/message-changes.js';
import { changesAfter } from '../../src/read-models/message-changes.js';
import type { Principal } from '../../src/domain/principal.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { feedRows } from '../support/feed-rows.js';

describe('the changes feed read model', function () {
  this.timeout(30_000);
  let t: TestDatabase;
  const key: Principal = { kind: 'apiKey', accountId: 'acct', apiKeyId: 'key-1', scopes: ['read_events'], dailyLimit: null };
  before(async () => {
    t = await createTestDatabase();
    await ensureProjection(t.db, messageChangesProjection);
  });
  after(async () => t?.drop());

  // Positions come back as text under their own names; ordering by those names sorted them as text,
  // so a page that spanned a power of ten (a log's transaction ids cross each one once) came out of
  // order, and its cursor, the last row's position, sent the next page back over rows already shown.
  it('pages in log order where positions gain a digit, as numbers, not as their text', async () => {
    await feedRows(t, [[1008, 2], [998, 5], [1008, 1], [1009, 100], [1009, 99], [9, 1]]);
    const all = await changesAfter(t.db, key, { commit: '0', prepare: '0' }, 10);
    expect(all.map((r) => `${r.commit_pos}.${r.prepare_pos}`)).to.deep.equal(['9.1', '998.5', '1008.1', '1008.2', '1009.99', '1009.100']);
    const page = await changesAfter(t.db, key, { commit: '998', prepare: '5' }, 2);
    expect(page.map((r) => `${r.commit_pos}.${r.prepare_pos}`)).to.deep.equal(['1008.1', '1008.2']);
  });
});
