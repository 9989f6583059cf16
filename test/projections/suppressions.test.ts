import { expect } from 'chai';
import type { AddressSuppressed, SuppressionLifted } from '../../src/domain/suppression/suppression.js';
import { suppressionsProjection } from '../../src/projections/suppressions.js';
import { projectionSpec } from '../support/projection-spec.js';

const suppressed = (over: Partial<AddressSuppressed['data']> = {}): AddressSuppressed => ({
  type: 'AddressSuppressed',
  data: {
    accountId: 'a1',
    value: 'ada@example.org',
    kind: 'email',
    reason: 'bounced',
    source: 'bounce',
    messageId: 'm1',
    campaignId: null,
    detail: 'smtp; 550 5.1.1 user unknown',
    occurredAt: '2024-05-01T12:00:00.000Z',
    ...over,
  },
});
const lifted = (accountId = 'a1', value = 'ada@example.org'): SuppressionLifted => ({
  type: 'SuppressionLifted',
  data: { accountId, value, kind: 'email', liftedAt: '2024-05-02T00:00:00.000Z', by: 'user:u1' },
});
const stream = (accountId = 'a1', value = 'ada@example.org') => `suppression-${accountId}-${value}`;

describe('suppressions projection (given events, then rows)', function () {
  this.timeout(30_000);
  let spec: Awaited<ReturnType<typeof projectionSpec>>;
  beforeEach(async () => {
    spec = await projectionSpec(suppressionsProjection);
  });
  afterEach(async () => spec?.drop());

  it('an AddressSuppressed writes the entry the send path checks, with reason, source and origin', async () => {
    await spec.given([stream(), [suppressed()]]);
    const rows = await spec.rows('suppressions');
    expect(rows).to.have.length(1);
    expect(rows[0]).to.deep.include({
      account_id: 'a1',
      value: 'ada@example.org',
      kind: 'email',
      reason: 'bounced',
      source: 'bounce',
      message_id: 'm1',
      campaign_id: null,
      detail: 'smtp; 550 5.1.1 user unknown',
    });
    expect(rows[0].created_at.toISOString()).to.equal('2024-05-01T12:00:00.000Z');
  });

  it('a lift removes only that account’s entry; a later suppression writes the new reason', async () => {
    await spec.given(
      [stream(), [suppressed()]],
      [stream('a2'), [suppressed({ accountId: 'a2', reason: 'complained', source: 'complaint' })]],
    );
    await spec.given([stream(), [lifted()]]);
    expect((await spec.rows('suppressions')).map((r) => [r.account_id, r.reason])).to.deep.equal([['a2', 'complained']]);
    await spec.given([stream(), [suppressed({ reason: 'manual', source: 'manual', messageId: null, occurredAt: '2024-05-03T00:00:00.000Z' })]]);
    const row = await spec.rows('suppressions').where({ account_id: 'a1' }).first();
    expect(row).to.deep.include({ reason: 'manual', source: 'manual', message_id: null });
    expect(row.created_at.toISOString()).to.equal('2024-05-03T00:00:00.000Z');
  });

  it('suppress, lift and suppress again in one batch ends suppressed; phone entries keep their kind', async () => {
    await spec.given(
      [stream(), [suppressed(), lifted(), suppressed({ reason: 'unsubscribed', source: 'one_click' })]],
      [stream('a1', '+14155552671'), [suppressed({ value: '+14155552671', kind: 'phone', reason: 'sms_optout', source: 'sms_optout', messageId: null })]],
    );
    const rows = await spec.rows('suppressions').orderBy('value');
    expect(rows.map((r) => [r.value, r.kind, r.reason, r.source])).to.deep.equal([
      ['+14155552671', 'phone', 'sms_optout', 'sms_optout'],
      ['ada@example.org', 'email', 'unsubscribed', 'one_click'],
    ]);
  });

  it('a batch that grows the list by a tenth or more leaves the planner counting its rows (statements prepared over it replan)', async () => {
    const reltuples = async () => Number((await spec.db.raw("SELECT reltuples FROM pg_class WHERE oid = 'suppressions_spec'::regclass")).rows[0].reltuples);
    const batch = (from: number, n: number): [string, AddressSuppressed[]][] =>
      Array.from({ length: n }, (_, i) => [stream('a1', `r${from + i}@example.org`), [suppressed({ value: `r${from + i}@example.org` })]]);
    await spec.given(...batch(0, 99));
    expect(await reltuples()).to.equal(-1); // never analyzed: a batch this small changes no plan
    await spec.given(...batch(99, 1_000));
    expect(await reltuples()).to.equal(1_099);
    await spec.given(...batch(1_099, 100)); // less than a tenth more
    expect(await reltuples()).to.equal(1_099);
    await spec.given(...batch(1_199, 200));
    expect(await reltuples()).to.equal(1_399);
  });
});
