import { expect } from 'chai';
import { simulatedReports } from '../../../src/domain/provider-events/sandbox-simulator.js';

const sent = (to: string) => ({ messageId: 'm1', providerMessageId: 'sandbox-m1', to, at: new Date('2031-01-01T00:00:00.000Z') });

describe('the sandbox mailbox simulator', () => {
  it('reports bounce@ as a hard bounce that suppresses, complaint@ as a complaint that suppresses, success@ as delivered', () => {
    const [bounce] = simulatedReports(sent('bounce@simulator.amazonses.com'));
    expect(bounce).to.deep.include({ provider: 'sandbox', messageId: 'm1', providerMessageId: 'sandbox-m1', suppress: { reason: 'bounced', source: 'bounce' } });
    expect(bounce.outcome).to.deep.include({ type: 'Bounced' });
    expect(bounce.outcome!.data).to.include({ bounceType: 'hard', recipient: 'bounce@simulator.amazonses.com', occurredAt: '2031-01-01T00:00:00.000Z' });
    const [complaint] = simulatedReports(sent('Complaint+x@Simulator.AmazonSES.com'));
    expect(complaint.outcome!.type).to.equal('Complained');
    expect(complaint.suppress).to.deep.equal({ reason: 'complained', source: 'complaint' });
    const [success] = simulatedReports(sent('success+42@simulator.amazonses.com'));
    expect(success.outcome!.type).to.equal('Delivered');
    expect(success.suppress).to.equal(undefined);
  });

  it('one report per message (a redelivery is recorded once); nothing for any other address', () => {
    expect(simulatedReports(sent('bounce@simulator.amazonses.com'))[0].providerEventId).to.equal(simulatedReports(sent('bounce@simulator.amazonses.com'))[0].providerEventId);
    for (const to of ['ada@example.org', 'bounce@example.org', 'ooto@simulator.amazonses.com', 'xbounce@simulator.amazonses.com']) expect(simulatedReports(sent(to)), to).to.deep.equal([]);
  });
});
