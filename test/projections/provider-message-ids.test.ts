import { expect } from 'chai';
import { providerMessageIdsProjection } from '../../src/projections/provider-message-ids.js';
import { projectionSpec } from '../support/projection-spec.js';

const accepted = (providerMessageId: string) => ({
  type: 'ProviderAccepted',
  data: { providerMessageId, provider: 'ses', acceptedAt: '2024-05-01T12:00:00.000Z', attempt: 1 },
});

describe('provider_message_ids projection (given events, then rows)', function () {
  this.timeout(30_000);
  let spec: Awaited<ReturnType<typeof projectionSpec>>;
  beforeEach(async () => {
    spec = await projectionSpec(providerMessageIdsProjection);
  });
  afterEach(async () => spec?.drop());

  it('maps each provider id to our message; other message events add nothing; a replay changes nothing', async () => {
    const queued = { type: 'EmailQueued', data: { messageId: 'm1' } };
    const delivered = { type: 'Delivered', data: { providerEventId: 'p', occurredAt: 't', recipient: 'r@example.org' } };
    await spec.given(['message-m1', [queued, accepted('0100-ses-1'), delivered]], ['message-m2', [accepted('pm-2')]]);
    await spec.given(['message-m1', [accepted('0100-ses-1')]]);
    const rows = await spec.rows('provider_message_ids').orderBy('message_id');
    expect(rows).to.deep.equal([
      { provider_message_id: '0100-ses-1', message_id: 'm1' },
      { provider_message_id: 'pm-2', message_id: 'm2' },
    ]);
  });
});
