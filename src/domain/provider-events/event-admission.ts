import { normaliseEmail } from '../email/address.js';
import type { EmailQueued, SmsQueued } from '../messages/events.js';

/** The providers that report on sends: SES and Postmark by their notifications, the sandbox by its simulator. */
export type EventProvider = 'ses' | 'postmark' | 'sandbox';

/** What a provider event claims about the send it reports on. */
export interface ProviderEventOrigin {
  provider: EventProvider;
  providerMessageId: string | null;
  recipient: string;
  /**
   * The keyed hash of `recipient`: how it is compared with the message's recipient once the message's
   * own address can no longer be read (its person erased, its content past retention).
   */
  person?: string;
  /** when the event reached us */
  receivedAt: string;
}

export type EventAdmission = { ok: true } | { ok: false; reason: string };

/** What an event is checked against: the message's stream folded (the part of MessageState it reads, declared here). */
export interface MessageSent {
  queued: EmailQueued['data'] | SmsQueued['data'] | null;
  channel: 'email' | 'sms' | null;
  providerMessageId: string | null;
  status: string | null;
  /** the recipient's keyed hash, which the sealing store keeps in clear beside the sealed address */
  person: string | null;
}

/**
 * How far the clocks of the process that sends a scheduled message and the one taking events about it
 * may disagree: an event before `sendAt` by more than this cannot be about a send, which the worker
 * makes at `sendAt` or later.
 */
export const SCHEDULE_CLOCK_SKEW_MS = 60_000;

/**
 * Whether a provider event may touch the message it names (by our id or by the provider's). Our message
 * ids are not secret (every tracked link carries one) and, where the sender of events is not pinned
 * down, neither is the event's content; so an event counts only when it agrees with the send itself:
 * - the message went out through the provider that reports on it (an SES event about a Postmark
 *   message, or about an SMS, is about nothing we sent);
 * - it names the provider's id for the message: the one recorded when the provider accepted it, or,
 *   before that is recorded, any (the event then proves the acceptance, see `acceptedAs`), unless the
 *   message was cancelled or is not due yet (a scheduled one);
 * - its recipient is the message's recipient (compared in normal form), so a bounce can never put
 *   anyone else, of this account or another, on a suppression list. Once the message's address reads
 *   as null (erased, or past retention) the two are compared by keyed hash: the provider still
 *   reports on the send, and a bounce or complaint must still suppress (by hash, for an erased person).
 * Pure: `message` is the message stream folded, the authority (the read models may lag behind it).
 */
export function admitProviderEvent(message: MessageSent, origin: ProviderEventOrigin): EventAdmission {
  const queued = message.queued;
  if (!queued) return { ok: false, reason: 'no such message' };
  if (message.channel !== 'email' || queued.provider !== origin.provider) return { ok: false, reason: `message was not sent through ${origin.provider}` };
  if (!origin.providerMessageId) return { ok: false, reason: 'event names no provider message id' };
  if (!message.providerMessageId) {
    // An event before the acceptance is recorded proves it (a worker that stopped between the
    // provider's answer and our append); but no send can have happened for a message withdrawn
    // before it was handed over, nor before its time.
    if (message.status === 'cancelled') return { ok: false, reason: 'message was cancelled before it was sent' };
    const { sendAt } = queued as EmailQueued['data'];
    if (sendAt && Date.parse(origin.receivedAt) < Date.parse(sendAt) - SCHEDULE_CLOCK_SKEW_MS) {
      return { ok: false, reason: 'message is scheduled for later and was not sent yet' };
    }
  }
  if (message.providerMessageId && message.providerMessageId !== origin.providerMessageId) {
    return { ok: false, reason: `provider message id ${origin.providerMessageId} is not the message's` };
  }
  if (!isRecipient(message, origin)) return { ok: false, reason: "recipient is not the message's recipient" };
  return { ok: true };
}

function isRecipient(message: MessageSent, origin: ProviderEventOrigin): boolean {
  const to = message.queued?.to;
  if (typeof to === 'string') return normaliseEmail(origin.recipient) === normaliseEmail(to);
  return Boolean(message.person && origin.person === message.person);
}
