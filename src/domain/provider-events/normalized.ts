import type { ProviderOutcome } from '../messages/events.js';
import type { SuppressionReason, SuppressionSource } from '../suppression/suppression.js';
import type { EventProvider } from './event-admission.js';

/** One provider-reported event about one recipient, in our terms. */
export interface NormalizedProviderEvent {
  /** who reported it: only a message sent through that provider can be its subject */
  provider: EventProvider;
  /** our message id when the provider echoed it back (SES tag / Postmark Metadata `msg_id`) */
  messageId: string | null;
  providerMessageId: string | null;
  /** when the provider accepted the message, where the event says (SES `mail.timestamp`) */
  acceptedAt?: string;
  /**
   * what to record on the message stream; absent for events that only suppress (Postmark
   * SubscriptionChange) or only prove the provider accepted the message (SES Send)
   */
  outcome?: ProviderOutcome;
  recipient: string;
  /** unique per provider event and recipient: a redelivery is recorded once */
  providerEventId: string;
  /** set when the event must put the recipient on the suppression list */
  suppress?: { reason: SuppressionReason; source: SuppressionSource };
}
