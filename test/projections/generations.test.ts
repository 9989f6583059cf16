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
});
