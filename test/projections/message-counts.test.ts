import { expect } from 'chai';
import { messageCountsProjection } from '../../src/projections/message-counts.js';
import { accepted, bounced, clicked, complained, delivered, emailQueued, failed, opened, smsQueued } from '../support/messages-projection.js';
import { messagesProjectionSpec } from '../support/messages-projection.js';

describe('message-counts projection (given events, then rows)', function () {
  this.timeout(30_000);
  let spec: Awaited<ReturnType<typeof messagesProjectionSpec>>;
  beforeEach(async () => {
    spec = await messagesProjectionSpec(messageCountsProjection);
  });
  afterEach(async () => spec?.drop());

  /** The non-zero rows of one label: [hour, account, key, status, kind, n]. */
  const counts = async (label = '') =>
    (await spec.rows('message_counts').where({ label }).whereNot('n', 0).orderBy(['hour', 'api_key_id', 'status', 'kind'])).map((r) => [
      new Date(r.hour).toISOString(),
      r.account_id,
      r.api_key_id,
      r.status,
      r.kind,
      Number(r.n),
    ]);

  it("counts each kind per account, sending key and hour of the event under the message's status, opens and clicks without suspected bots", async () => {
    await spec.given(
      ['m1', [emailQueued('m1'), accepted(), delivered('2024-05-01T11:10:00.000Z'), opened(false, '2024-05-01T12:30:00.000Z'), opened(true, '2024-05-01T12:31:00.000Z')]],
      ['m2', [emailQueued('m2'), accepted(), bounced('hard', '2024-05-01T11:59:59.999Z')]],
    );
    // a later batch finds the owner it did not see queued, and adds to the counts
    await spec.given(['m1', [clicked(false, '2024-05-01T12:45:00.000Z'), clicked(true, '2024-05-01T12:46:00.000Z'), opened(false, '2024-05-01T12:50:00.000Z')]]);
    expect(await counts()).to.deep.equal([
      ['2024-05-01T10:00:00.000Z', 'acc1', 'key1', 'bounced', 'sent', 1],
      ['2024-05-01T10:00:00.000Z', 'acc1', 'key1', 'delivered', 'sent', 1],
      ['2024-05-01T11:00:00.000Z', 'acc1', 'key1', 'bounced', 'bounced', 1],
      ['2024-05-01T11:00:00.000Z', 'acc1', 'key1', 'delivered', 'delivered', 1],
      ['2024-05-01T12:00:00.000Z', 'acc1', 'key1', 'delivered', 'clicked', 1],
      ['2024-05-01T12:00:00.000Z', 'acc1', 'key1', 'delivered', 'opened', 2],
    ]);
    // a message whose whole life is in one batch writes only where it ended, never its moves
    expect(await spec.rows('message_counts').where({ status: 'sent' }).count('* as n').first()).to.deep.equal({ n: 0 });
  });

  it("moves a message's earlier counts to its new status when the status changes in a later batch", async () => {
    await spec.given(['m1', [emailQueued('m1'), accepted()]]);
    expect(await counts()).to.deep.equal([['2024-05-01T10:00:00.000Z', 'acc1', 'key1', 'sent', 'sent', 1]]);
    await spec.given(['m1', [delivered('2024-05-01T11:10:00.000Z'), opened(false, '2024-05-01T12:30:00.000Z')]]);
    expect(await counts()).to.deep.equal([
      ['2024-05-01T10:00:00.000Z', 'acc1', 'key1', 'delivered', 'sent', 1],
      ['2024-05-01T11:00:00.000Z', 'acc1', 'key1', 'delivered', 'delivered', 1],
      ['2024-05-01T12:00:00.000Z', 'acc1', 'key1', 'delivered', 'opened', 1],
    ]);
    // a complaint after delivery makes it `complained`; a soft bounce is counted but changes no status
    await spec.given(['m1', [bounced('soft', '2024-05-01T13:00:00.000Z')]], ['m1', [complained('2024-05-02T09:00:00.000Z')]]);
    expect(await counts()).to.deep.equal([
      ['2024-05-01T10:00:00.000Z', 'acc1', 'key1', 'complained', 'sent', 1],
      ['2024-05-01T11:00:00.000Z', 'acc1', 'key1', 'complained', 'delivered', 1],
      ['2024-05-01T12:00:00.000Z', 'acc1', 'key1', 'complained', 'opened', 1],
      ['2024-05-01T13:00:00.000Z', 'acc1', 'key1', 'complained', 'bounced', 1],
      ['2024-05-02T09:00:00.000Z', 'acc1', 'key1', 'complained', 'complained', 1],
    ]);
    const owner = await spec.rows('message_owners').where({ id: 'm1' }).first();
    expect([owner.status, owner.counted]).to.deep.equal([
      'complained',
      {
        '2024-05-01T10:00:00.000Z sent': 1,
        '2024-05-01T11:00:00.000Z delivered': 1,
        '2024-05-01T12:00:00.000Z opened': 1,
        '2024-05-01T13:00:00.000Z bounced': 1,
        '2024-05-02T09:00:00.000Z complained': 1,
      },
    ]);
  });

  it('counts each event once more under each tag and each metadata entry of its message', async () => {
    await spec.given(
      ['m1', [emailQueued('m1', { tags: ['welcome', 'eu'], metadata: { plan: 'pro', team: 'a=b' } }), accepted()]],
      // key `team=a` with value `b` is another entry than key `team` with value `a=b`, and keys may be any text
      ['m2', [emailQueued('m2', { tags: ['welcome'], metadata: { 'team=a': 'b', 'Zahlungs art': 'Kärtchen', '50%': 'x' } }), accepted(), delivered('2024-05-01T11:10:00.000Z')]],
      ['m3', [emailQueued('m3'), accepted()]],
    );
    await spec.given(['m1', [delivered('2024-05-01T11:20:00.000Z')]]);
    expect(await counts()).to.deep.equal([
      ['2024-05-01T10:00:00.000Z', 'acc1', 'key1', 'delivered', 'sent', 2],
      ['2024-05-01T10:00:00.000Z', 'acc1', 'key1', 'sent', 'sent', 1],
      ['2024-05-01T11:00:00.000Z', 'acc1', 'key1', 'delivered', 'delivered', 2],
    ]);
    const bothDelivered = [
      ['2024-05-01T10:00:00.000Z', 'acc1', 'key1', 'delivered', 'sent', 2],
      ['2024-05-01T11:00:00.000Z', 'acc1', 'key1', 'delivered', 'delivered', 2],
    ];
    const m1Only = bothDelivered.map((r) => [...r.slice(0, 5), 1]);
    expect(await counts('tag:welcome')).to.deep.equal(bothDelivered);
    expect(await counts('tag:eu')).to.deep.equal(m1Only);
    expect(await counts('metadata:plan=pro')).to.deep.equal(m1Only);
    expect(await counts('metadata:team=a=b')).to.deep.equal(m1Only);
    expect(await counts('metadata:team%3Da=b')).to.deep.equal(m1Only);
    expect(await counts('metadata:Zahlungs art=Kärtchen')).to.deep.equal(m1Only);
    expect((await spec.rows('message_counts').distinct('label')).map((r) => r.label).sort()).to.deep.equal([
      '',
      'metadata:50%25=x',
      'metadata:Zahlungs art=Kärtchen',
      'metadata:plan=pro',
      'metadata:team%3Da=b',
      'metadata:team=a=b',
      'tag:eu',
      'tag:welcome',
    ]);
  });

  it("the dashboard's own sends count under no key; failures and queueing are not counted", async () => {
    await spec.given(['s1', [smsQueued('s1'), failed()]], ['m3', [emailQueued('m3', { apiKeyId: null }), accepted()]]);
    expect(await counts()).to.deep.equal([['2024-05-01T10:00:00.000Z', 'acc1', '', 'sent', 'sent', 1]]);
    expect((await spec.rows('message_owners').orderBy('id')).map((r) => [r.id, r.account_id, r.api_key_id, r.status, r.labels])).to.deep.equal([
      ['m3', 'acc1', '', 'sent', []],
      ['s1', 'acc1', '', 'failed', []],
    ]);
  });

  it('an event for a message never seen queued is left out', async () => {
    await spec.given(['ghost', [accepted(), delivered()]]);
    expect(await spec.rows('message_counts')).to.deep.equal([]);
    expect(await spec.rows('message_owners')).to.deep.equal([]);
  });
});
