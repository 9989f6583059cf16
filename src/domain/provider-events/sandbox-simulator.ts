import type { NormalizedProviderEvent } from './normalized.js';

const SIMULATED = /^(success|bounce|complaint)(\+[^@]*)?@simulator\.amazonses\.com$/i;

/**
 * The sandbox's mailbox simulator, after SES's: a message to `success@`, `bounce@` or `complaint@`
 * `simulator.amazonses.com` is reported delivered, hard-bounced or complained about, as a provider
 * would report it, so an integrator can see a bounce suppress an address and fire `contact.bounced`
 * without sending real mail. A `+label` after the word keeps addresses apart (a bounce suppresses
 * its address). Any other recipient gets no report: the sandbox delivers nothing.
 */
export function simulatedReports(sent: { messageId: string; providerMessageId: string; to: string; at: Date }): NormalizedProviderEvent[] {
  const kind = SIMULATED.exec(sent.to.trim())?.[1].toLowerCase();
  if (!kind) return [];
  const providerEventId = `sandbox:${kind}:${sent.messageId}`;
  const base = { providerEventId, occurredAt: sent.at.toISOString(), recipient: sent.to };
  const report = { provider: 'sandbox' as const, messageId: sent.messageId, providerMessageId: sent.providerMessageId, recipient: sent.to, providerEventId };
  switch (kind) {
    case 'success':
      return [{ ...report, outcome: { type: 'Delivered', data: { ...base, smtpResponse: '250 2.6.0 Message received (sandbox simulator)' } } }];
    case 'bounce':
      return [
        {
          ...report,
          outcome: { type: 'Bounced', data: { ...base, bounceType: 'hard', subType: 'General', diagnostic: 'smtp; 550 5.1.1 user unknown (sandbox simulator)' } },
          suppress: { reason: 'bounced', source: 'bounce' },
        },
      ];
    default:
      return [
        {
          ...report,
          outcome: { type: 'Complained', data: { ...base, feedbackType: 'abuse' } },
          suppress: { reason: 'complained', source: 'complaint' },
        },
      ];
  }
}
