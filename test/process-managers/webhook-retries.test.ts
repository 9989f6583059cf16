import { expect } from 'chai';
import { deliveryEffectId, DELIVER_WEBHOOK_JOB } from '../../src/domain/webhooks/delivery.js';
import { RETRY_TAKEOVER_MS, webhookRetriesManager } from '../../src/process-managers/webhook-retries.js';
import { recordSideEffects } from '../../src/adapters/db/side-effects.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { recorded } from '../support/given.js';

describe('webhook retries process manager (given retry events, then side effects)', function () {
  this.timeout(30_000);
  let database: TestDatabase;
  beforeEach(async () => {
    database = await createTestDatabase();
  });
  afterEach(async () => database?.drop());

  const retried = (deliveryId: string, series: number) =>
    recorded(`delivery-${deliveryId}`, [{ type: 'WebhookRetryRequested', data: { series, by: 'user:u1', at: '2024-05-02T00:00:00.000Z' } }]);

  it("a retry's series gets the delivery's effect under the first series' ordering key, due after the endpoint's own", async () => {
    await database.db.transaction((trx) =>
      recordSideEffects(trx, [{ id: deliveryEffectId('d1', 1), kind: DELIVER_WEBHOOK_JOB, payload: { deliveryId: 'd1', series: 1 }, runAfter: new Date(), orderingKey: 'sub1:ada@example.org' }]),
    );
    const before = Date.now();
    const effects = await database.db.transaction((trx) => webhookRetriesManager.handle([...retried('d1', 2), ...retried('d2', 3)], trx));
    expect(effects.map(({ runAfter, ...e }) => e)).to.deep.equal([
      { id: deliveryEffectId('d1', 2), kind: DELIVER_WEBHOOK_JOB, payload: { deliveryId: 'd1', series: 2 }, orderingKey: 'sub1:ada@example.org' },
      // no first series on record (cannot happen through the fan-out): no ordering, still made
      { id: deliveryEffectId('d2', 3), kind: DELIVER_WEBHOOK_JOB, payload: { deliveryId: 'd2', series: 3 }, orderingKey: undefined },
    ]);
    for (const e of effects) expect(e.runAfter.getTime()).to.be.within(before + RETRY_TAKEOVER_MS, Date.now() + RETRY_TAKEOVER_MS);
  });
});
