import { expect } from 'chai';
import type { DeliveryEvent } from '../../src/domain/webhooks/delivery.js';
import { webhookDeliveriesProjection } from '../../src/projections/webhook-deliveries.js';
import { projectionSpec } from '../support/projection-spec.js';

const at = (minute: number) => `2024-05-01T12:${String(minute).padStart(2, '0')}:00.000Z`;
const scheduled = (id: string, minute = 0): DeliveryEvent => ({
  type: 'WebhookDeliveryScheduled',
  data: { deliveryId: id, accountId: 'a1', subscriptionId: 'w1', event: 'contact.bounced', body: '{}', orderingKey: 'w1:x', scheduledAt: at(minute) },
});
const attempt = (type: 'WebhookAttemptFailed' | 'WebhookDelivered' | 'WebhookDeliveryFailed', n: number, status: number | null, minute: number): DeliveryEvent =>
  ({
    type,
    data: { attempt: n, series: 1, responseStatus: status, error: status === 200 ? null : `HTTP ${status}`, at: at(minute), ...(type === 'WebhookAttemptFailed' ? { nextAttemptAt: at(minute + 1) } : {}) },
  }) as DeliveryEvent;
const retried = (minute: number): DeliveryEvent => ({ type: 'WebhookRetryRequested', data: { series: 2, by: 'user:u1', at: at(minute) } });

describe('webhook_deliveries projection (given events, then rows)', function () {
  this.timeout(30_000);
  let spec: Awaited<ReturnType<typeof projectionSpec>>;
  beforeEach(async () => {
    spec = await projectionSpec(webhookDeliveriesProjection, { streamId: (id) => `delivery-${id}` });
  });
  afterEach(async () => spec?.drop());

  const row = async (id: string) => {
    const r = await spec.rows('webhook_deliveries').where({ id }).first();
    return r && { ...r, next_attempt_at: r.next_attempt_at?.toISOString() ?? null, updated_at: r.updated_at.toISOString(), created_at: r.created_at.toISOString() };
  };

  it('scheduled → retrying with no attempts; each attempt sets status, attempts, last response and next attempt', async () => {
    await spec.given(['d1', [scheduled('d1')]]);
    expect(await row('d1')).to.deep.include({ status: 'retrying', attempts: 0, last_response_status: null, next_attempt_at: at(0), subscription_id: 'w1', event: 'contact.bounced' });
    await spec.given(['d1', [attempt('WebhookAttemptFailed', 1, 503, 1)]]);
    expect(await row('d1')).to.deep.include({ status: 'retrying', attempts: 1, last_response_status: 503, last_error: 'HTTP 503', next_attempt_at: at(2), updated_at: at(1) });
    await spec.given(['d1', [attempt('WebhookDeliveryFailed', 2, 404, 3)]]);
    expect(await row('d1')).to.deep.include({ status: 'failed', attempts: 2, last_response_status: 404, next_attempt_at: null, created_at: at(0) });
    await spec.given(['d1', [retried(5)]]);
    expect(await row('d1')).to.deep.include({ status: 'retrying', attempts: 0, last_response_status: 404, last_error: 'HTTP 404', next_attempt_at: at(5) });
  });

  it('one batch and one event per batch give the same rows, for many deliveries at once', async () => {
    const story = (id: string): [string, DeliveryEvent[]] => [id, [scheduled(id), attempt('WebhookAttemptFailed', 1, 500, 1), attempt('WebhookDelivered', 2, 200, 2)]];
    const ids = ['d1', 'd2', 'd3'];
    await spec.given(...ids.map(story), ['d4', [scheduled('d4')]]);
    const together = await Promise.all(['d1', 'd2', 'd3', 'd4'].map(row));
    expect(together[0]).to.deep.include({ status: 'delivered', attempts: 2, last_response_status: 200, last_error: null, next_attempt_at: null });
    expect(together[3]).to.deep.include({ status: 'retrying', attempts: 0 });

    const single = await projectionSpec(webhookDeliveriesProjection, { streamId: (id) => `delivery-${id}` });
    try {
      for (const [id, events] of [...ids.map(story), ['d4', [scheduled('d4')]] as [string, DeliveryEvent[]]]) {
        for (const e of events) await single.given([id, [e]]);
      }
      const apart = await single.rows('webhook_deliveries').orderBy('id');
      expect(apart.map((r) => ({ ...r }))).to.deep.equal((await spec.rows('webhook_deliveries').orderBy('id')).map((r) => ({ ...r })));
    } finally {
      await single.drop();
    }
  });

  it('an outcome for a delivery never scheduled writes nothing; a second schedule changes nothing', async () => {
    await spec.given(['d9', [attempt('WebhookDelivered', 1, 200, 1)]]);
    expect(await spec.rows('webhook_deliveries')).to.deep.equal([]);
    await spec.given(['d1', [scheduled('d1', 0), attempt('WebhookDelivered', 1, 200, 1)]]);
    await spec.given(['d1', [scheduled('d1', 9)]]);
    expect(await row('d1')).to.deep.include({ status: 'delivered', created_at: at(0) });
  });
});
