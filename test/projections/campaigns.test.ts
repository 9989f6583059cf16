import { expect } from 'chai';
import type { CampaignEvent } from '../../src/domain/campaigns/campaign.js';
import { campaignsProjection } from '../../src/projections/campaigns.js';
import { projectionSpec } from '../support/projection-spec.js';

const created: CampaignEvent = {
  type: 'CampaignCreated',
  data: {
    campaignId: 'c1',
    accountId: 'a1',
    createdBy: 'user:u1',
    createdAt: '2026-01-01T00:00:00.000Z',
    name: 'Spring',
    templateId: 't1',
    fromEmail: 'news@acme.test',
    fromName: null,
    replyTo: null,
    audience: { listId: 'l1', tag: 'vip' },
    variables: { season: 'spring' },
  },
};
const step = (fromCursor: string | null, cursor: string, counts: { queued: number; skipped: number; unfilled: number }, audience?: number): CampaignEvent => ({
  type: 'CampaignProgressed',
  data: { campaignId: 'c1', fromCursor, cursor, ...counts, ...(audience === undefined ? {} : { audience }), continues: true, at: '2026-01-01T00:00:02.000Z' },
});

describe('campaigns projection (given events, then rows)', function () {
  this.timeout(30_000);
  let spec: Awaited<ReturnType<typeof projectionSpec>>;
  beforeEach(async () => {
    spec = await projectionSpec(campaignsProjection, { streamId: (k) => `campaign-${k}` });
  });
  afterEach(async () => spec?.drop());

  it('a created campaign is a draft with its definition and no progress', async () => {
    await spec.given(['c1', [created]]);
    const [row] = await spec.rows('campaigns');
    expect(row).to.deep.include({ id: 'c1', account_id: 'a1', status: 'draft', template_id: 't1', from_email: 'news@acme.test', queued: 0, skipped: 0, audience_count: null });
    expect(row.audience).to.deep.equal({ listId: 'l1', tag: 'vip' });
    expect(row.variables).to.deep.equal({ season: 'spring' });
  });

  it('a change rewrites only the fields it names; a deleted draft is no row', async () => {
    await spec.given(['c1', [created, { type: 'CampaignChanged', data: { campaignId: 'c1', changes: { templateId: 't2', fromName: 'Acme', audience: { tag: 'new' } }, changedAt: 'T1' } }]]);
    const [row] = await spec.rows('campaigns');
    expect(row).to.deep.include({ name: 'Spring', template_id: 't2', from_email: 'news@acme.test', from_name: 'Acme', reply_to: null, status: 'draft' });
    expect(row.audience).to.deep.equal({ tag: 'new' });
    expect(row.variables).to.deep.equal({ season: 'spring' });
    await spec.given(['c1', [{ type: 'CampaignDeleted', data: { campaignId: 'c1', deletedAt: 'T2' } }]]);
    expect(await spec.rows('campaigns')).to.deep.equal([]);
  });

  it('steps add up; the first names the audience; sent ends it', async () => {
    await spec.given(['c1', [created, { type: 'CampaignStarted', data: { campaignId: 'c1', startedAt: '2026-01-01T00:00:01.000Z' } }]]);
    await spec.given(['c1', [step(null, 'k2', { queued: 2, skipped: 1, unfilled: 1 }, 5), step('k2', 'k5', { queued: 1, skipped: 1, unfilled: 0 })]]);
    let [row] = await spec.rows('campaigns');
    expect(row).to.deep.include({ status: 'sending', queued: 3, skipped: 2, unfilled: 1, audience_count: 5 });
    expect(row.started_at.toISOString()).to.equal('2026-01-01T00:00:01.000Z');
    await spec.given(['c1', [{ type: 'CampaignSent', data: { campaignId: 'c1', finishedAt: '2026-01-01T00:00:03.000Z' } }]]);
    [row] = await spec.rows('campaigns');
    expect(row.status).to.equal('sent');
    expect(row.finished_at.toISOString()).to.equal('2026-01-01T00:00:03.000Z');
  });

  it('a cap pause keeps its reason and resume time until resumed', async () => {
    await spec.given([
      'c1',
      [
        created,
        { type: 'CampaignStarted', data: { campaignId: 'c1', startedAt: '2026-01-01T00:00:01.000Z' } },
        { type: 'CampaignPaused', data: { campaignId: 'c1', reason: 'daily_send_cap', pausedAt: '2026-01-01T00:00:02.000Z', resumeAt: '2026-01-02T00:00:00.000Z' } },
      ],
    ]);
    let [row] = await spec.rows('campaigns');
    expect(row).to.deep.include({ status: 'paused', paused_reason: 'daily_send_cap' });
    expect(row.resume_at.toISOString()).to.equal('2026-01-02T00:00:00.000Z');
    await spec.given(['c1', [{ type: 'CampaignResumed', data: { campaignId: 'c1', resumedAt: '2026-01-02T00:00:01.000Z', auto: true } }]]);
    [row] = await spec.rows('campaigns');
    expect(row).to.deep.include({ status: 'sending', paused_reason: null, resume_at: null });
  });
});
