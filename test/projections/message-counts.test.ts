import { expect } from 'chai';
import { messageCountsProjection } from '../../src/projections/message-counts.js';
import { accepted, bounced, clicked, delivered, emailQueued, failed, opened, smsQueued } from '../support/messages-projection.js';
import { messagesProjectionSpec } from '../support/messages-projection.js';

describe('message-counts projection (given events, then rows)', function () {
  this.timeout(30_000);
  let spec: Awaited<ReturnType<typeof messagesProjectionSpec>>;
  beforeEach(async () => {
    spec = await messagesProjectionSpec(messageCountsProjection);
  });
  afterEach(async () => spec?.drop());

  const counts = async () =>
    (await spec.rows('message_counts').orderBy(['hour', 'api_key_id', 'kind'])).map((r) => [new Date(r.hour).toISOString(), r.account_id, r.api_key_id, r.kind, Number(r.n)]);

  it('counts each kind per account, sending key and hour of the event, opens and clicks without suspected bots', async () => {
    await spec.given(
      ['m1', [emailQueued('m1'), accepted(), delivered('2024-05-01T11:10:00.000Z'), opened(false, '2024-05-01T12:30:00.000Z'), opened(true, '2024-05-01T12:31:00.000Z')]],
      ['m2', [emailQueued('m2'), accepted(), bounced('hard', '2024-05-01T11:59:59.999Z')]],
    );
    // a later batch finds the owner it did not see queued, and adds to the counts
    await spec.given(['m1', [clicked(false, '2024-05-01T12:45:00.000Z'), clicked(true, '2024-05-01T12:46:00.000Z'), opened(false, '2024-05-01T12:50:00.000Z')]]);
    expect(await counts()).to.deep.equal([
      ['2024-05-01T10:00:00.000Z', 'acc1', 'key1', 'sent', 2],
      ['2024-05-01T11:00:00.000Z', 'acc1', 'key1', 'bounced', 1],
      ['2024-05-01T11:00:00.000Z', 'acc1', 'key1', 'delivered', 1],
      ['2024-05-01T12:00:00.000Z', 'acc1', 'key1', 'clicked', 1],
      ['2024-05-01T12:00:00.000Z', 'acc1', 'key1', 'opened', 2],
    ]);
  });

  it("the dashboard's own sends count under no key; failures and queueing are not counted", async () => {
    await spec.given(['s1', [smsQueued('s1'), failed()]], ['m3', [emailQueued('m3', { apiKeyId: null }), accepted()]]);
    expect(await counts()).to.deep.equal([['2024-05-01T10:00:00.000Z', 'acc1', '', 'sent', 1]]);
    expect((await spec.rows('message_owners').orderBy('id')).map((r) => [r.id, r.account_id, r.api_key_id])).to.deep.equal([
      ['m3', 'acc1', ''],
      ['s1', 'acc1', ''],
    ]);
  });

  it('an outcome for a message never seen queued is left out', async () => {
    await spec.given(['ghost', [delivered()]]);
    expect(await counts()).to.deep.equal([]);
  });
});
