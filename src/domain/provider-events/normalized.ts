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
  /**
   * unique per provider event and recipient: a redelivery is recorded once. Recorded in clear, so it
   * holds nothing of the person (provider-event-ids.ts)
   */
  providerEventId: string;
  /**
   * The id earlier versions recorded the same report under (ending with the recipient's address or the
   * link), where it differs: compared, never recorded, so a report first recorded before an upgrade
   * and delivered again after it is still recorded once.
   */
  formerId?: string;
  /**
   * set when the event must put the recipient on the suppression list; `occurredAt`, when the provider
   * made the change, for an event with no outcome to date it (else the outcome's time, or now)
   */
  suppress?: { reason: SuppressionReason; source: SuppressionSource; occurredAt?: string };
}

/** The longest text kept from a provider's report (a diagnostic, a user agent, a link). */
export const MAX_REPORTED_TEXT = 2_000;

/**
 * A field of a provider's payload as the text our events keep, or undefined: what is not a string (an
 * object where a string was due, null) is dropped, and a very long one is cut, so a payload's oddities
 * neither fail the ingest nor swell every history that shows it.
 */
export const reportedText = (value: unknown): string | undefined => (typeof value === 'string' ? value.slice(0, MAX_REPORTED_TEXT) : undefined);

/**
 * A report a provider made with its answer (the sandbox's simulator), dated when it is recorded: after
 * the acceptance recorded before it, so that a message's timeline shows the send first.
 */
export function reportedAt(report: NormalizedProviderEvent, at: string): NormalizedProviderEvent {
  if (!report.outcome) return report;
  return { ...report, outcome: { ...report.outcome, data: { ...report.outcome.data, occurredAt: at } } as ProviderOutcome };
}
