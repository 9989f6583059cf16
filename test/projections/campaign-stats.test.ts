import { expect } from 'chai';
import { messagesProjection } from '../../src/projections/messages.js';
import { accepted, attemptFailed, bounced, clicked, complained, delivered, emailQueued, failed, messagesProjectionSpec, opened } from '../support/messages-projection.js';

describe('campaign stats of the messages projection (given events, then rows)', function () {
  this.timeout(30_000);
  let spec: Awaited<ReturnType<typeof messagesProjectionSpec>>;
  beforeEach(async () => {
    spec = await messagesProjectionSpec(messagesProjection);
  });
  afterEach(async () => spec?.drop());

  /** The non-zero rows: [campaign, status, messages, opened, opens, clicked, clicks]. */
  const stats = async () =>
    (await spec.rows('campaign_stats').whereNot('messages', 0).orderBy(['campaign_id', 'status'])).map((r) =>
      [r.campaign_id, r.status, r.messages, r.opened, r.opens, r.clicked, r.clicks].map((v) => (typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v)),
    );
  /** The same figures counted over the message rows, as `GET /api/messages/aggregate?campaignId=` counts them. */
  const counted = async () =>
    (
      await spec
        .rows('messages')
        .whereNotNull('campaign_id')
        .groupBy('campaign_id', 'status')
        .orderBy(['campaign_id', 'status'])
        .select(
          'campaign_id',
          'status',
          spec.db.raw('count(*)::int AS messages'),
          spec.db.raw('count(*) FILTER (WHERE opens > 0)::int AS opened'),
          spec.db.raw('sum(opens)::int AS opens'),
          spec.db.raw('count(*) FILTER (WHERE clicks > 0)::int AS clicked'),
          spec.db.raw('sum(clicks)::int AS clicks'),
        )
    ).map((r) => [r.campaign_id, r.status, r.messages, r.opened, r.opens, r.clicked, r.clicks]);

  it("counts a campaign's messages per current status, with opens and clicks (without suspected bots), and leaves other messages out", async () => {
    await spec.given(
      ['m1', [emailQueued('m1', { campaignId: 'c1' }), accepted(), delivered(), opened(), opened(true), opened(), clicked()]],
      ['m2', [emailQueued('m2', { campaignId: 'c1' }), accepted(), bounced('hard')]],
      ['m3', [emailQueued('m3', { campaignId: 'c2' })]],
      ['m4', [emailQueued('m4'), accepted(), delivered(), opened()]],
    );
    expect(await stats()).to.deep.equal([
      ['c1', 'bounced', 1, 0, 0, 0, 0],
      ['c1', 'delivered', 1, 1, 2, 1, 1],
      ['c2', 'queued', 1, 0, 0, 0, 0],
    ]);
    // a later batch moves a stored message from one status to another, its opens and clicks with it
    await spec.given(['m1', [complained()]], ['m3', [accepted()]], ['m3', [opened()]]);
    expect(await stats()).to.deep.equal([
      ['c1', 'bounced', 1, 0, 0, 0, 0],
      ['c1', 'complained', 1, 1, 2, 1, 1],
      ['c2', 'sent', 1, 1, 1, 0, 0],
    ]);
    expect(await stats()).to.deep.equal(await counted());
  });

  it('equals the count over the message rows after every batch of a random history', async () => {
    let seed = 2_463_534_242;
    const random = (n: number) => {
      // xorshift32: the same history on every run
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % n;
    };
    const outcomes = [accepted, attemptFailed, failed, delivered, () => bounced('hard'), () => bounced('soft'), complained, () => opened(false), () => opened(true), () => clicked(false), () => clicked(true)];
    const queued = new Set<string>();
    for (let batch = 0; batch < 12; batch++) {
      const events: [string, { type: string; data: any }[]][] = [];
      for (let i = 0; i < 1 + random(30); i++) {
        const id = `m${random(40)}`;
        if (!queued.has(id)) {
          queued.add(id);
          events.push([id, [emailQueued(id, { campaignId: random(4) === 0 ? null : `c${random(3)}` })]]);
        }
        events.push([id, [outcomes[random(outcomes.length)]()]]);
      }
      await spec.given(...events);
      expect(await stats(), `after batch ${batch}`).to.deep.equal(await counted());
    }
    expect((await stats()).length).to.be.greaterThan(4);
  });
});
