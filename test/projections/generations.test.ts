import { expect } from 'chai';
import { applyBatch, ensureProjection } from '../../src/projections/generations.js';
import { messagesProjection } from '../../src/projections/messages.js';
import { recorded } from '../support/given.js';
import { emailQueued, opened } from '../support/messages-projection.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

describe('applyBatch (read model and checkpoint in one transaction)', () => {
  let t: TestDatabase;
  before(async () => {
    t = await createTestDatabase();
    await ensureProjection(t.db, messagesProjection);
  });
  after(() => t.drop());

  it('applies nothing at or before the stored checkpoint: a batch another owner already applied is not counted twice', async () => {
    // What a runner that lost its lock without noticing would hand over after the new owner applied the batch.
    const [queued, open] = recorded('message-m1', [emailQueued('m1'), opened()]);
    const apply = (events: typeof queued[]) => t.db.transaction((trx) => applyBatch(trx, messagesProjection, 1, events, { requireActive: true }));
    expect(await apply([queued, open])).to.equal(true);
    expect(await apply([open])).to.equal(true);
    expect(await apply([queued, open])).to.equal(true);
    const row = await t.db('messages').where({ id: 'm1' }).first();
    expect(row.opens).to.equal(1);
    const checkpoint = await t.db('projection_checkpoints').where({ name: 'messages', generation: 1 }).first();
    expect(Number(checkpoint.events)).to.equal(2);
  });

  it('finds the rows a batch changes by key, even in a read model that grew after its statistics were taken', async () => {
    // One row when analysed, 20,000 when the batch comes: the planner then preferred to scan the whole
    // table and hash-join it to the batch.
    const [queued] = recorded('message-seed', [emailQueued('seed')]);
    await t.db.transaction((trx) => applyBatch(trx, messagesProjection, 1, [{ ...queued, position: { commit: 10n, prepare: 1n } }], { requireActive: true }));
    await t.db.raw('ANALYZE messages_g1');
    // The record built in FROM, once a row: `(jsonb_populate_record(...)).*` in the select list calls it once a
    // column (17-20 s for these rows, against 2).
    await t.db.raw(`INSERT INTO messages_g1 SELECT r.*
      FROM messages_g1 m, generate_series(1, 20000) g,
        jsonb_populate_record(NULL::messages_g1, to_jsonb(m) || jsonb_build_object('id', 'bulk-' || g)) r
      WHERE m.id = 'seed'`);
    const opens = Array.from({ length: 30 }, (_, i) => ({
      ...recorded(`message-bulk-${i * 97 + 1}`, [opened()])[0],
      position: { commit: 11n, prepare: BigInt(i + 1) },
    }));
    const scans = await t.db.transaction(async (trx) => {
      // The counts not yet reported to the statistics collector: this transaction's, and seemingly also
      // the pooled connection's earlier ones of the last second (the INSERT above scans the table:
      // read after the batch alone, 10 scans showed up in 3 of 19 runs), so the batch's own are the
      // difference across it.
      const seqScans = async () => Number((await trx.raw(`SELECT seq_scan FROM pg_stat_xact_user_tables WHERE relname = 'messages_g1'`)).rows[0]?.seq_scan ?? 0);
      const before = await seqScans();
      await applyBatch(trx, messagesProjection, 1, opens, { requireActive: true });
      return (await seqScans()) - before;
    });
    expect(scans).to.equal(0);
    const row = await t.db('messages').where({ id: 'bulk-98' }).first();
    expect(row.opens).to.equal(1);
  });

  it("commits without waiting for the WAL flush, in the batch's transaction only: the log it is rebuilt from is durable", async () => {
    const [queued] = recorded('message-flush', [emailQueued('flush')]);
    const during = await t.db.transaction(async (trx) => {
      await applyBatch(trx, messagesProjection, 1, [{ ...queued, position: { commit: 20n, prepare: 1n } }], { requireActive: true });
      return (await trx.raw(`SELECT current_setting('synchronous_commit') AS v`)).rows[0].v;
    });
    expect(during).to.equal('off');
    expect((await t.db.raw(`SELECT current_setting('synchronous_commit') AS v`)).rows[0].v).to.equal('on');
  });
});
