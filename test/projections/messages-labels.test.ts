import { expect } from 'chai';
import { messagesProjection } from '../../src/projections/messages.js';
import { accepted, emailQueued, messagesProjectionSpec, smsQueued } from '../support/messages-projection.js';

describe('messages projection: tags and metadata (given events, then rows)', function () {
  this.timeout(30_000);
  let spec: Awaited<ReturnType<typeof messagesProjectionSpec>>;
  beforeEach(async () => {
    spec = await messagesProjectionSpec(messagesProjection);
  });
  afterEach(async () => spec?.drop());

  it('EmailQueued with tags and metadata writes them on the row; later events keep them', async () => {
    await spec.given(['m1', [emailQueued('m1', { tags: ['receipt', 'eu:west'], metadata: { orderId: '1042', plan: 'pro' } }), accepted('pm-1')]]);
    expect(await spec.message('m1')).to.deep.include({
      status: 'sent',
      tags: ['receipt', 'eu:west'],
      metadata: { orderId: '1042', plan: 'pro' },
    });
  });

  it('an EmailQueued recorded before tags existed, and an SMS, fold to no tags and empty metadata', async () => {
    const old = emailQueued('old');
    delete old.data.tags;
    delete old.data.metadata;
    await spec.given(['old', [old]], ['s1', [smsQueued('s1')]]);
    expect(await spec.message('old')).to.deep.include({ tags: [], metadata: {} });
    expect(await spec.message('s1')).to.deep.include({ tags: [], metadata: {} });
  });

  it('containment on tags and metadata is answered by their GIN indexes', async () => {
    await spec.given(['m1', [emailQueued('m1', { tags: ['a'], metadata: { k: 'v' } })]], ['m2', [emailQueued('m2')]]);
    const m = spec.t('messages');
    const plan = async (where: string, binding: string | string[]) =>
      spec.db.transaction(async (trx) => {
        // a two-row table is cheaper to scan: forbid that, so the plan shows whether an index can answer at all
        await trx.raw('SET LOCAL enable_seqscan = off');
        const { rows } = await trx.raw(`EXPLAIN SELECT id FROM ?? WHERE ${where}`, [m, binding]);
        return rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
      });
    expect(await plan('tags @> ?::text[]', ['a'])).to.include(`${m}_tags`);
    expect(await plan('metadata @> ?::jsonb', JSON.stringify({ k: 'v' }))).to.include(`${m}_metadata`);
    const rows = await spec.db(m).whereRaw('tags @> ?::text[]', [['a']]).andWhereRaw('metadata @> ?::jsonb', [JSON.stringify({ k: 'v' })]).pluck('id');
    expect(rows).to.deep.equal(['m1']);
  });
});
