import { expect } from 'chai';
import sinon from 'sinon';
import { randomUUID } from 'node:crypto';
import { createPostgresEventStore } from '../../src/adapters/eventstore/postgres-event-store.js';
import { createSuppressionCommands } from '../../src/commands/suppressions.js';
import { execute } from '../../src/commands/execute.js';
import type { Decider } from '../../src/domain/decider.js';
import type { EventStore } from '../../src/ports/event-store.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

/** Counts events; `add` appends one unless the count already reached `upTo`. */
const counter: Decider<number, { upTo: number }> = {
  initialState: 0,
  evolve: (n) => n + 1,
  decide: (command, n) => (n < command.upTo ? [{ type: 'Added', data: {} }] : []),
};

describe('execute (load, decide, append)', () => {
  let t: TestDatabase;
  let store: EventStore;
  before(async () => {
    t = await createTestDatabase();
    store = createPostgresEventStore({ connectionString: t.url, pollIntervalMs: 50 });
  });
  after(async () => {
    await store.close();
    await t.drop();
  });

  it('a decision that appends nothing answers the position of the stream’s last event, for read-your-writes', async () => {
    const streamId = `count-${randomUUID()}`;
    const first = await execute(counter, { upTo: 1 }, { eventStore: store, streamId });
    expect(first.events).to.have.length(1);
    const again = await execute(counter, { upTo: 1 }, { eventStore: store, streamId });
    expect(again.events).to.have.length(0);
    expect(again.position).to.deep.equal(first.position);
    expect((await execute(counter, { upTo: 0 }, { eventStore: store, streamId: `none-${randomUUID()}` })).position).to.equal(undefined);
  });

  it('a repeated suppression waits for the same position as the first (a second bounce cannot answer before the list shows it)', async () => {
    const waitFor = sinon.stub().resolves();
    const suppressions = createSuppressionCommands({ eventStore: store, db: t.db, waitFor, personOf: (address) => address });
    const input = { accountId: 'acc1', email: 'twice@example.org', reason: 'bounced' as const, source: 'bounce' as const, actor: 'test' };
    expect((await suppressions.suppress(input)).suppressed).to.equal(true);
    expect((await suppressions.suppress(input)).suppressed).to.equal(false);
    expect(waitFor.callCount).to.equal(2);
    const [[, firstPosition], [, secondPosition]] = waitFor.args;
    expect(firstPosition).to.not.equal(undefined);
    expect(secondPosition).to.deep.equal(firstPosition);
  });
});
