import { expect } from 'chai';
import { query } from '../../../src/adapters/db/knex.js';
import { ACCOUNT_SCOPE_PREFIX, createSendCounters, KEY_SCOPE_PREFIX, utcDay, type CapScopes, type SendCounters } from '../../../src/adapters/db/send-counters.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';

interface SlotRequest {
  accountId: string;
  accountCap: number;
  apiKeyId?: string;
  keyLimit?: number;
  now: Date;
}

/** The counters a send takes a slot of: its key's only when the key has a cap. */
const scopesOf = (r: SlotRequest): CapScopes => ({
  day: utcDay(r.now),
  keyScope: r.apiKeyId && r.keyLimit != null ? KEY_SCOPE_PREFIX + r.apiKeyId : null,
  accountScope: ACCOUNT_SCOPE_PREFIX + r.accountId,
});

/**
 * One send's reservation, as the admission statements take it (reserve_send_slots over the sends
 * arriving together), without their checks.
 */
function reserver(counters: SendCounters) {
  const batches = counters.slotBatches<CapScopes & { keyCap: number | null; accountCap: number }, string>(async (db, day, items) => {
    const [row] = await query<{ outcomes: string[] }>(db, 'SELECT reserve_send_slots($1::date, $2::text[], $3::int[], $4::text[], $5::int[]) AS outcomes', [
      day,
      items.map((r) => r.keyScope),
      items.map((r) => r.keyCap),
      items.map((r) => r.accountScope),
      items.map((r) => r.accountCap),
    ]);
    return row.outcomes;
  });
  return async (request: SlotRequest) => {
    const scopes = scopesOf(request);
    const outcome = await batches.add({ ...scopes, keyCap: scopes.keyScope ? request.keyLimit! : null, accountCap: request.accountCap });
    return counters.settle(outcome, scopes);
  };
}

describe('daily send counters (reservations decided together)', () => {
  let db: TestDatabase;
  let counters: SendCounters;
  let reserve: ReturnType<typeof reserver>;
  before(async () => {
    db = await createTestDatabase();
    counters = createSendCounters(db.url);
    reserve = reserver(counters);
  });
  after(async () => {
    await counters.close();
    await db.drop();
  });

  const outcome = (p: Promise<unknown>) => p.then(() => 'ok', (err: Error) => err.message);

  it('decides concurrent reservations in arrival order, as if one by one: key cap, then account cap', async () => {
    const now = new Date('2026-03-01T12:00:00Z');
    const keyed = (apiKeyId: string) => reserve({ accountId: 'acc1', accountCap: 4, apiKeyId, keyLimit: 2, now });
    const plain = () => reserve({ accountId: 'acc1', accountCap: 4, now });
    const results = await Promise.all([keyed('k1'), keyed('k1'), keyed('k1'), plain(), keyed('k2'), plain(), keyed('k2')].map(outcome));
    expect(results).to.deep.equal([
      'ok',
      'ok',
      'daily send limit reached for this API key',
      'ok',
      'ok',
      'Daily send limit reached',
      'Daily send limit reached',
    ]);
    expect(await counters.used('account:acc1', now)).to.equal(4);
    expect(await counters.used('key:k1', now)).to.equal(2);
    // k2's second try was refused by the account cap: its key slot was not taken
    expect(await counters.used('key:k2', now)).to.equal(1);
  });

  it('gives a slot back on release, and counts each UTC day on its own, a batch across midnight too', async () => {
    const late = new Date('2026-03-02T23:59:59.999Z');
    const early = new Date('2026-03-03T00:00:00.000Z');
    const [a, b, c] = await Promise.all([
      reserve({ accountId: 'acc2', accountCap: 1, now: late }),
      reserve({ accountId: 'acc2', accountCap: 1, now: early }),
      outcome(reserve({ accountId: 'acc2', accountCap: 1, now: late })),
    ]);
    expect(c).to.equal('Daily send limit reached');
    expect(await counters.used('account:acc2', late)).to.equal(1);
    expect(await counters.used('account:acc2', early)).to.equal(1);
    await Promise.all([(a as { release(): Promise<void> }).release(), (b as { release(): Promise<void> }).release()]);
    expect(await counters.used('account:acc2', late)).to.equal(0);
    expect(await counters.used('account:acc2', early)).to.equal(0);
    expect(await outcome(reserve({ accountId: 'acc2', accountCap: 1, now: late }))).to.equal('ok');
  });

  it('a cap of 0 refuses every send', async () => {
    const now = new Date('2026-03-04T12:00:00Z');
    expect(await outcome(reserve({ accountId: 'acc3', accountCap: 0, now }))).to.equal('Daily send limit reached');
    expect(await outcome(reserve({ accountId: 'acc3', accountCap: 5, apiKeyId: 'k3', keyLimit: 0, now }))).to.equal(
      'daily send limit reached for this API key',
    );
  });

  it('two processes reserving at once against shared counters: exact caps, no deadlock', async () => {
    const other = createSendCounters(db.url);
    const reserveElsewhere = reserver(other);
    try {
      const now = new Date('2026-03-05T12:00:00Z');
      const results = await Promise.all(
        Array.from({ length: 120 }, (_, i) =>
          outcome((i % 2 ? reserve : reserveElsewhere)({ accountId: 'acc4', accountCap: 37, apiKeyId: `k4-${i % 3}`, keyLimit: 15, now })),
        ),
      );
      expect(results.filter((r) => r === 'ok')).to.have.length(37);
      expect(await counters.used('account:acc4', now)).to.equal(37);
      const perKey = await Promise.all([0, 1, 2].map((k) => counters.used(`key:k4-${k}`, now)));
      expect(perKey.reduce((a, b) => a + b)).to.equal(37);
      for (const n of perKey) expect(n).to.be.at.most(15);
    } finally {
      await other.close();
    }
  });
});
