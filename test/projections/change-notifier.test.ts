import { expect } from 'chai';
import { createChangeNotifier, type ChangeNotifier, type ChangeScope, type ChangeWatch } from '../../src/projections/change-notifier.js';
import { ensureProjection } from '../../src/projections/generations.js';
import { messageChangesProjection } from '../../src/projections/message-changes.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { feedRows } from '../support/feed-rows.js';

const positions = (rows: { commit_pos: string; prepare_pos: string }[] | undefined) => rows?.map((r) => `${r.commit_pos}.${r.prepare_pos}`);

/**
 * The notifier's loop reads what the feed's projection commits and wakes the pollers it concerns; the
 * rows it read answer the polls whose cursor lies after the point where it began keeping them.
 */
describe('changes feed notifier', function () {
  this.timeout(30_000);
  let t: TestDatabase;
  let notifier: ChangeNotifier;
  let clock: number;
  const watches: ChangeWatch[] = [];
  const key1: ChangeScope = { accountId: 'acct', apiKeyId: 'key-1' };
  const key2: ChangeScope = { accountId: 'acct', apiKeyId: 'key-2' };
  const account: ChangeScope = { accountId: 'acct' };
  const watch = async (scope: ChangeScope) => {
    const w = await notifier.watch(scope);
    watches.push(w);
    return w;
  };
  const woken = (w: ChangeWatch, ms = 3000) => Promise.race([w.changed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

  beforeEach(async () => {
    t = await createTestDatabase();
    await ensureProjection(t.db, messageChangesProjection);
    clock = Date.now();
    notifier = createChangeNotifier({ db: t.db, pollMs: 10, windowMs: 5_000, now: () => clock });
  });
  afterEach(async () => {
    watches.splice(0).forEach((w) => w.dispose());
    await new Promise((r) => setTimeout(r, 50)); // the loop sees nobody waiting and stops
    await t.drop();
  });

  it('answers from the rows it read, in log order where positions gain a digit, each caller only its own', async () => {
    await feedRows(t, [[990, 1]]);
    const w1 = await watch(key1);
    const w2 = await watch(key2);
    await feedRows(t, [[1008, 2], [998, 5], [1008, 1], [1009, 100], [1009, 99]]);
    await feedRows(t, [[1010, 1]], { account: 'acct', key: 'key-2' });
    await feedRows(t, [[1011, 1]], { account: 'other', key: 'key-3' });
    expect(await woken(w1)).to.equal(true);
    expect(await woken(w2)).to.equal(true);
    await new Promise((r) => setTimeout(r, 100)); // every row looked at
    const from = { commit: '990', prepare: '1' };
    expect(positions(notifier.recent(key1, from, 10))).to.deep.equal(['998.5', '1008.1', '1008.2', '1009.99', '1009.100']);
    expect(positions(notifier.recent(key1, { commit: '1008', prepare: '1' }, 2))).to.deep.equal(['1008.2', '1009.99']);
    expect(positions(notifier.recent(key2, from, 10))).to.deep.equal(['1010.1']);
    expect(positions(notifier.recent(account, from, 10))).to.deep.equal(['998.5', '1008.1', '1008.2', '1009.99', '1009.100', '1010.1']);
    // at the head: nothing yet, so the caller waits (no read of its own)
    expect(positions(notifier.recent(key1, { commit: '1011', prepare: '1' }, 10))).to.deep.equal([]);
  });

  it('a watch is woken by a row of its own scope, not by another key\'s', async () => {
    const w1 = await watch(key1);
    await feedRows(t, [[2000, 1]], { account: 'acct', key: 'key-2' });
    expect(await woken(w1, 500)).to.equal(false);
    await feedRows(t, [[2001, 1]]);
    expect(await woken(w1)).to.equal(true);
  });

  it('leaves a cursor from before it began keeping rows, or from rows kept too long, to the table', async () => {
    await feedRows(t, [[100, 1], [100, 2]]);
    const w = await watch(key1);
    // it began at the head (100.2): a cursor before it is not its to answer
    expect(notifier.recent(key1, { commit: '100', prepare: '1' }, 10)).to.equal(undefined);
    expect(positions(notifier.recent(key1, { commit: '100', prepare: '2' }, 10))).to.deep.equal([]);
    await feedRows(t, [[101, 1]]);
    expect(await woken(w)).to.equal(true);
    expect(positions(notifier.recent(key1, { commit: '100', prepare: '2' }, 10))).to.deep.equal(['101.1']);

    // five seconds later, with nothing new, it drops what it read before (an erasure may have changed it since)
    clock += 6_000;
    await new Promise((r) => setTimeout(r, 100)); // a few looks
    expect(notifier.recent(key1, { commit: '100', prepare: '2' }, 10)).to.equal(undefined);
    expect(positions(notifier.recent(key1, { commit: '101', prepare: '1' }, 10))).to.deep.equal([]);
    const again = await watch(key1);
    await feedRows(t, [[102, 1]]);
    expect(await woken(again)).to.equal(true);
    expect(positions(notifier.recent(key1, { commit: '101', prepare: '1' }, 10))).to.deep.equal(['102.1']);
  });
});
