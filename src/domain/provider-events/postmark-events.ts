import type { ProviderOutcome } from '../messages/events.js';
import { reportedText, type NormalizedProviderEvent } from './normalized.js';
import type { KeyedDigest } from './provider-event-ids.js';

/**
 * Bounce types that mean the address will never accept mail; Postmark's own `Inactive` (it stopped
 * sending to the address) also counts. DnsError, Blocked, AddressChange and the like are temporary
 * or informational: suppressing on them would lose addresses that still work.
 */
const HARD_BOUNCE_TYPES = new Set(['HardBounce', 'BadEmailAddress', 'ManuallyDeactivated']);

/**
 * Why a SubscriptionChange stops sending to its recipient: Postmark's bounce or complaint, the
 * recipient's own unsubscribe through Postmark's link (origin `Recipient`), or else a suppression the
 * sender or Postmark made (`Customer`, `Admin`).
 */
function subscriptionSuppression(reason: unknown, origin: unknown): NonNullable<NormalizedProviderEvent['suppress']> {
  if (reason === 'HardBounce') return { reason: 'bounced', source: 'bounce' };
  if (reason === 'SpamComplaint') return { reason: 'complained', source: 'complaint' };
  if (origin === 'Recipient') return { reason: 'unsubscribed', source: 'form' };
  return { reason: 'manual', source: 'manual' };
}

/**
 * Postmark webhooks (delivery, bounce, spam complaint, open, click) to our events; ids make a
 * redelivered webhook a no-op, and name no one: a delivery is its message's (one recipient each),
 * a click its message's and its link's, by `linkDigest` (Postmark reports each link of a message once).
 */
export function parsePostmarkEvent(p: any, linkDigest: KeyedDigest): NormalizedProviderEvent[] {
  const messageId: string | null = typeof p?.Metadata?.msg_id === 'string' ? p.Metadata.msg_id : null;
  const providerMessageId: string | null = typeof p?.MessageID === 'string' ? p.MessageID : null;
  const at = (ts: unknown) => (typeof ts === 'string' && !Number.isNaN(Date.parse(ts)) ? new Date(ts).toISOString() : new Date().toISOString());
  // `formerId`: the id earlier versions gave the report, which ended with the recipient or the link
  const one = (outcome: ProviderOutcome, suppress?: NormalizedProviderEvent['suppress'], formerId?: string): NormalizedProviderEvent[] =>
    typeof outcome.data.recipient === 'string' && outcome.data.recipient
      ? [
          {
            provider: 'postmark',
            messageId,
            providerMessageId,
            outcome,
            recipient: outcome.data.recipient,
            providerEventId: outcome.data.providerEventId,
            ...(suppress ? { suppress } : {}),
            ...(formerId ? { formerId } : {}),
          },
        ]
      : [];

  switch (p?.RecordType) {
    case 'Delivery':
      return one(
        {
          type: 'Delivered',
          data: { providerEventId: `pm:delivery:${p.MessageID}`, recipient: p.Recipient, occurredAt: at(p.DeliveredAt), smtpResponse: reportedText(p.Details) },
        },
        undefined,
        `pm:delivery:${p.MessageID}:${p.Recipient}`,
      );
    case 'Bounce': {
      const hard = p.Inactive === true || HARD_BOUNCE_TYPES.has(p.Type);
      return one(
        {
          type: 'Bounced',
          data: {
            providerEventId: `pm:bounce:${p.ID}`,
            recipient: p.Email,
            occurredAt: at(p.BouncedAt),
            bounceType: hard ? 'hard' : 'soft',
            subType: reportedText(p.Type),
            diagnostic: reportedText(p.Details ?? p.Description),
          },
        },
        hard ? { reason: 'bounced', source: 'bounce' } : undefined,
      );
    }
    case 'SpamComplaint':
      return one(
        { type: 'Complained', data: { providerEventId: `pm:complaint:${p.ID}`, recipient: p.Email, occurredAt: at(p.BouncedAt), feedbackType: reportedText(p.Type) } },
        { reason: 'complained', source: 'complaint' },
      );
    case 'Open':
      return one({
        type: 'Opened',
        data: {
          providerEventId: `pm:open:${p.MessageID}:${p.ReceivedAt}`,
          recipient: p.Recipient,
          occurredAt: at(p.ReceivedAt),
          userAgent: reportedText(p.UserAgent),
          suspectedBot: false,
          source: 'provider',
        },
      });
    case 'Click': {
      const url = reportedText(p.OriginalLink) ?? '';
      return one(
        {
          type: 'Clicked',
          data: {
            providerEventId: `pm:click:${p.MessageID}:${linkDigest(url)}`,
            recipient: p.Recipient,
            occurredAt: at(p.ReceivedAt),
            url,
            userAgent: reportedText(p.UserAgent),
            suspectedBot: false,
            source: 'provider',
          },
        },
        undefined,
        `pm:click:${p.MessageID}:${p.ReceivedAt}:${url}`,
      );
    }
    case 'SubscriptionChange':
      // Only a change that starts suppressing concerns us; reactivation is done through our own API.
      if (p.SuppressSending !== true || typeof p.Recipient !== 'string') return [];
      return [
        {
          provider: 'postmark',
          messageId,
          providerMessageId,
          recipient: p.Recipient,
          providerEventId: `pm:subscription:${p.MessageID}:${p.ChangedAt}`,
          suppress: { ...subscriptionSuppression(p.SuppressionReason, p.Origin), occurredAt: at(p.ChangedAt) },
        },
      ];
    default:
      return [];
  }
}
