import { expect } from 'chai';
import { deliveryDecider, type DeliveryScheduled } from '../../../src/domain/webhooks/delivery.js';
import { given } from '../../support/given.js';

const schedule: DeliveryScheduled['data'] = {
  deliveryId: 'd1',
  accountId: 'a1',
  subscriptionId: 's1',
  event: 'contact.bounced',
  body: '{"id":"e1"}',
  orderingKey: 's1:ada@example.org',
  scheduledAt: '2024-05-01T10:00:00.000Z',
};
const scheduled: DeliveryScheduled = { type: 'WebhookDeliveryScheduled', data: schedule };
const result = (attempt: number, responseStatus: number | null = 503) => ({ attempt, responseStatus, error: responseStatus === 200 ? null : `HTTP ${responseStatus}`, at: 't' });
const failedAttempt = (attempt: number) => ({ type: 'WebhookAttemptFailed', data: { ...result(attempt), series: 1, nextAttemptAt: 'later' } });

describe('webhook delivery decider (given events, when command, then events)', () => {
  it('a first attempt before the schedule was recorded records both, in order', () => {
    const events = given(deliveryDecider).when({ kind: 'recordAttempt', outcome: 'retry', result: result(1), nextAttemptAt: 'later', schedule });
    expect(events).to.deep.equal([scheduled, { type: 'WebhookAttemptFailed', data: { ...result(1), series: 1, nextAttemptAt: 'later' } }]);
  });

  it('with the schedule already recorded (a re-run job), only the outcome', () => {
    const events = given(deliveryDecider, [scheduled]).when({ kind: 'recordAttempt', outcome: 'delivered', result: result(1, 200), nextAttemptAt: null, schedule });
    expect(events).to.deep.equal([{ type: 'WebhookDelivered', data: { ...result(1, 200), series: 1 } }]);
  });

  it('an attempt already recorded, or one on a finished delivery, changes nothing', () => {
    expect(given(deliveryDecider, [scheduled, failedAttempt(1)]).when({ kind: 'recordAttempt', outcome: 'retry', result: result(1), nextAttemptAt: 'later' })).to.deep.equal([]);
    const delivered = { type: 'WebhookDelivered', data: { ...result(2, 200), series: 1 } };
    expect(given(deliveryDecider, [scheduled, failedAttempt(1), delivered]).when({ kind: 'recordAttempt', outcome: 'failed', result: result(3, 404), nextAttemptAt: null })).to.deep.equal([]);
  });

  it('a retry without a next attempt time is a final failure', () => {
    const events = given(deliveryDecider, [scheduled, ...[1, 2, 3, 4, 5].map(failedAttempt)]).when({ kind: 'recordAttempt', outcome: 'retry', result: result(6), nextAttemptAt: null });
    expect(events).to.deep.equal([{ type: 'WebhookDeliveryFailed', data: { ...result(6), series: 1 } }]);
  });

  it('only a failed delivery of the same account can be retried: a new series', () => {
    const failed = { type: 'WebhookDeliveryFailed', data: { ...result(1, 404), series: 1 } };
    expect(given(deliveryDecider, [scheduled, failed]).when({ kind: 'retry', accountId: 'a1', subscriptionRemoved: false, by: 'user:u', now: 't' })).to.deep.equal([
      { type: 'WebhookRetryRequested', data: { series: 2, by: 'user:u', at: 't', deliveryId: 'd1', accountId: 'a1' } },
    ]);
    expect(() => given(deliveryDecider, [scheduled, failed]).when({ kind: 'retry', accountId: 'a2', subscriptionRemoved: false, by: 'user:u', now: 't' })).to.throw('delivery d1 not found');
    expect(() => given(deliveryDecider, [scheduled]).when({ kind: 'retry', accountId: 'a1', subscriptionRemoved: false, by: 'user:u', now: 't' })).to.throw('only a failed delivery can be retried (this one is retrying)');
    expect(() => given(deliveryDecider).when({ kind: 'retry', accountId: 'a1', subscriptionRemoved: false, by: 'user:u', now: 't' })).to.throw('delivery not found');
  });

  it('a delivery of a removed endpoint is not found; one about a person erased since cannot be sent again: 409', () => {
    const failed = { type: 'WebhookDeliveryFailed', data: { ...result(1, 404), series: 1 } };
    const retry = { kind: 'retry', accountId: 'a1', by: 'user:u', now: 't' } as const;
    expect(() => given(deliveryDecider, [scheduled, failed]).when({ ...retry, subscriptionRemoved: true })).to.throw('delivery d1 not found').with.property('status', 404);
    const erased = { ...scheduled, data: { ...schedule, body: null as unknown as string } };
    expect(() => given(deliveryDecider, [erased, failed]).when({ ...retry, subscriptionRemoved: false }))
      .to.throw('the person this delivery is about was erased: it cannot be sent again')
      .with.property('status', 409);
  });
});
