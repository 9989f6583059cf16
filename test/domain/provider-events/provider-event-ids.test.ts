import { expect } from 'chai';
import { parkedReport, metadataWithoutPersonalIds, withoutPersonalPart } from '../../../src/domain/provider-events/provider-event-ids.js';
import type { NormalizedProviderEvent } from '../../../src/domain/provider-events/normalized.js';
import type { RecordedEvent } from '../../../src/ports/event-store.js';
import { CURRENT_IDS, FORMER_IDS, MID } from '../../support/provider-event-ids.js';


describe('provider event ids of earlier versions, read without the address or link they ended with', () => {
  it('takes the recipient or the link (and anything after it) off an id an earlier version recorded', () => {
    for (const [recorded, read] of FORMER_IDS) expect(withoutPersonalPart(recorded), recorded).to.equal(read);
  });

  it('leaves ids of this version, and ids that never named anyone, as they are', () => {
    for (const id of CURRENT_IDS) expect(withoutPersonalPart(id), id).to.equal(id);
    // what it gives is read as it is: reading twice changes nothing
    for (const [, read] of FORMER_IDS) expect(withoutPersonalPart(read), read).to.equal(read);
  });

  it('an event’s metadata (command id, cause) is read without them; its data is left to `redact`; an event without any is the same object', () => {
    const legacy = `pm:delivery:${MID}:ada@example.org`;
    const e: RecordedEvent = {
      id: 'e1',
      streamId: 'message-m1',
      revision: 2,
      type: 'ProviderAccepted',
      data: { providerMessageId: MID },
      metadata: { actor: 'provider', commandId: legacy, causationId: legacy, correlationId: 'req-1' },
      schemaVersion: 1,
      recordedAt: new Date(0),
      position: { commit: 1n, prepare: 1n },
    };
    expect(metadataWithoutPersonalIds(e).metadata).to.deep.equal({ actor: 'provider', commandId: `pm:delivery:${MID}`, causationId: `pm:delivery:${MID}`, correlationId: 'req-1' });
    const delivered = { ...e, type: 'Delivered', data: { providerEventId: legacy, recipient: 'ada@example.org' } };
    expect(metadataWithoutPersonalIds(delivered).data).to.equal(delivered.data);
    const current = { ...e, metadata: { commandId: `pm:delivery:${MID}` } };
    expect(metadataWithoutPersonalIds(current)).to.equal(current);
  });

  it('a report parked by an earlier version is applied under the id it reads as', () => {
    const id = 'ses:915f76db-fdae-4ce9-90d7-907e9de5de0d:ada@example.org';
    const parked: NormalizedProviderEvent = {
      provider: 'ses',
      messageId: 'm1',
      providerMessageId: 'ses-1',
      recipient: 'ada@example.org',
      providerEventId: id,
      outcome: { type: 'Delivered', data: { providerEventId: id, occurredAt: 't', recipient: 'ada@example.org' } },
    };
    const now = parkedReport(parked);
    expect(now.providerEventId).to.equal('ses:915f76db-fdae-4ce9-90d7-907e9de5de0d');
    expect(now.outcome!.data.providerEventId).to.equal('ses:915f76db-fdae-4ce9-90d7-907e9de5de0d');
    expect(now.recipient).to.equal('ada@example.org');
    // should the same report have been recorded under its old id meanwhile
    expect(now.formerId).to.equal(id);
    expect(parkedReport(now)).to.equal(now);
  });
});
