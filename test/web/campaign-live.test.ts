import { expect } from 'chai';
import { SETTLING_MS, stillChanging } from '../../web/src/campaign-live.js';

describe('dashboard: which campaigns can still change, so the page reads them again', () => {
  const now = Date.parse('2026-03-01T12:00:00Z');
  const stats = (status: Record<string, number>) => ({ total: 5, status, opens: { unique: 0, total: 0 }, clicks: { unique: 0, total: 0 } });
  const longAgo = new Date(now - SETTLING_MS - 1).toISOString();

  it('a campaign fanning out, or sent or paused with messages still queued or scheduled', () => {
    expect(stillChanging({ status: 'sending', stats: stats({}) }, now)).to.equal(true);
    expect(stillChanging({ status: 'sent', finishedAt: longAgo, stats: stats({ queued: 2, sent: 3 }) }, now)).to.equal(true);
    expect(stillChanging({ status: 'paused', finishedAt: null, stats: stats({ scheduled: 1, sent: 4 }) }, now)).to.equal(true);
  });

  it('a sent campaign for a while after its fan-out ended, as providers report deliveries and opens', () => {
    expect(stillChanging({ status: 'sent', finishedAt: new Date(now - SETTLING_MS + 1000).toISOString(), stats: stats({ sent: 5 }) }, now)).to.equal(true);
    expect(stillChanging({ status: 'sent', finishedAt: longAgo, stats: stats({ sent: 5 }) }, now)).to.equal(false);
  });

  it('not a draft, a scheduled or cancelled campaign, nor a paused one with nothing on its way', () => {
    for (const status of ['draft', 'scheduled', 'cancelled']) expect(stillChanging({ status, finishedAt: null, stats: stats({}) }, now), status).to.equal(false);
    expect(stillChanging({ status: 'paused', finishedAt: null, stats: stats({ sent: 5 }) }, now)).to.equal(false);
  });
});
