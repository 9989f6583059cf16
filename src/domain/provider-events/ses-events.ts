import { reportedText, type NormalizedProviderEvent } from './normalized.js';

/**
 * SES event notifications (configuration-set `eventType` or identity `notificationType`, as AWS documents them)
 * to our events. `notificationId` (the SNS MessageId) makes each notification unique, so a
 * redelivered SNS message is recorded once; a bounce or complaint is keyed by its own `feedbackId`
 * instead, which stays the same when SES reports it twice (identity notifications and a
 * configuration set's event publishing both on). The ids name no recipient (they are kept in clear):
 * each of our messages has one, so the notification names the event. Every event names the send SES
 * accepted (`mail`); Send says nothing else, and counts only with our `msg_id` tag (it can then prove
 * a send whose answer we never recorded). Kinds we do not track (Reject, DeliveryDelay, ...) give [].
 */
export function parseSesEvent(notificationId: string, payload: any): NormalizedProviderEvent[] {
  const kind: string | undefined = payload?.eventType ?? payload?.notificationType;
  const mail = payload?.mail ?? {};
  const tag = mail.tags?.msg_id;
  const messageId: string | null = Array.isArray(tag) && typeof tag[0] === 'string' ? tag[0] : null;
  const providerMessageId: string | null = typeof mail.messageId === 'string' ? mail.messageId : null;
  const acceptedAt = typeof mail.timestamp === 'string' && !Number.isNaN(Date.parse(mail.timestamp)) ? new Date(mail.timestamp).toISOString() : undefined;
  const base = (recipient: string, feedbackId?: unknown) => ({
    providerEventId: typeof feedbackId === 'string' && feedbackId ? `ses:feedback:${feedbackId}` : `ses:${notificationId}`,
    recipient,
  });
  const at = (ts: unknown) => (typeof ts === 'string' && !Number.isNaN(Date.parse(ts)) ? new Date(ts).toISOString() : new Date().toISOString());
  const emails = (list: unknown, field = 'emailAddress'): string[] =>
    Array.isArray(list) ? list.map((r) => (typeof r === 'string' ? r : r?.[field])).filter((r): r is string => typeof r === 'string') : [];

  const withKeys = (events: Omit<NormalizedProviderEvent, 'provider' | 'recipient' | 'providerEventId'>[]): NormalizedProviderEvent[] =>
    events
      .filter((e) => typeof e.outcome?.data.recipient === 'string')
      .map((e) => {
        const { recipient, providerEventId } = e.outcome!.data;
        // `formerId`: the id earlier versions gave the report, which ended with the recipient
        return { provider: 'ses' as const, ...e, ...(acceptedAt ? { acceptedAt } : {}), recipient, providerEventId, formerId: `${providerEventId}:${recipient}` };
      });

  switch (kind) {
    case 'Bounce': {
      const b = payload.bounce ?? {};
      const hard = b.bounceType === 'Permanent';
      return withKeys((Array.isArray(b.bouncedRecipients) ? b.bouncedRecipients : []).map((r: any) => ({
        messageId,
        providerMessageId,
        outcome: {
          type: 'Bounced' as const,
          data: {
            ...base(r?.emailAddress, b.feedbackId),
            occurredAt: at(b.timestamp),
            bounceType: hard ? ('hard' as const) : ('soft' as const),
            subType: reportedText(b.bounceSubType),
            diagnostic: reportedText(r?.diagnosticCode ?? r?.status),
          },
        },
        ...(hard ? { suppress: { reason: 'bounced' as const, source: 'bounce' as const } } : {}),
      })));
    }
    case 'Complaint': {
      const c = payload.complaint ?? {};
      // A feedback loop's correction ("this is not spam") reaches us as a complaint too: the recipient
      // did not complain, so neither the message nor the suppression list changes.
      if (c.complaintFeedbackType === 'not-spam') return [];
      return withKeys(emails(c.complainedRecipients).map((recipient) => ({
        messageId,
        providerMessageId,
        outcome: { type: 'Complained' as const, data: { ...base(recipient, c.feedbackId), occurredAt: at(c.timestamp), feedbackType: reportedText(c.complaintFeedbackType) } },
        suppress: { reason: 'complained' as const, source: 'complaint' as const },
      })));
    }
    case 'Delivery': {
      const d = payload.delivery ?? {};
      return withKeys(emails(d.recipients).map((recipient) => ({
        messageId,
        providerMessageId,
        outcome: { type: 'Delivered' as const, data: { ...base(recipient), occurredAt: at(d.timestamp), smtpResponse: reportedText(d.smtpResponse) } },
      })));
    }
    case 'Open': {
      const o = payload.open ?? {};
      return withKeys(emails(mail.destination).slice(0, 1).map((recipient) => ({
        messageId,
        providerMessageId,
        outcome: {
          type: 'Opened' as const,
          data: { ...base(recipient), occurredAt: at(o.timestamp), userAgent: reportedText(o.userAgent), ip: reportedText(o.ipAddress), suspectedBot: false, source: 'provider' as const },
        },
      })));
    }
    case 'Click': {
      const c = payload.click ?? {};
      return withKeys(emails(mail.destination).slice(0, 1).map((recipient) => ({
        messageId,
        providerMessageId,
        outcome: {
          type: 'Clicked' as const,
          data: { ...base(recipient), occurredAt: at(c.timestamp), url: reportedText(c.link) ?? '', userAgent: reportedText(c.userAgent), ip: reportedText(c.ipAddress), suspectedBot: false, source: 'provider' as const },
        },
      })));
    }
    case 'Send': {
      const recipient = emails(mail.destination)[0];
      if (!messageId || !providerMessageId || !recipient) return [];
      return [{ provider: 'ses', messageId, providerMessageId, ...(acceptedAt ? { acceptedAt } : {}), recipient, providerEventId: `ses:${notificationId}:send` }];
    }
    default:
      return [];
  }
}
