import type { SuppressionReason } from '../suppression/suppression.js';

/**
 * A send is admitted against the suppression list as the list stands at that moment. A provider call
 * that comes much later (a scheduled send at its time, a retry, a campaign's message that waited its
 * turn) would otherwise reach an address that unsubscribed, bounced or complained in between, and
 * sends to those are rejected. Such a call looks at the list again first. An immediate send
 * is called milliseconds after its admission looked: it is not looked at twice, so the hot path keeps
 * its one statement.
 */
export const RECHECK_AFTER_MS = 5_000;

/**
 * Whether the provider call at `now` looks at the suppression list again: a scheduled send always
 * (whatever the clocks of the processes that accepted it and that send it say), any other message once
 * it has waited RECHECK_AFTER_MS since it was accepted.
 */
export function rechecksSuppression(queued: { queuedAt: string; sendAt?: string | null }, now: string): boolean {
  return Boolean(queued.sendAt) || Date.parse(now) - Date.parse(queued.queuedAt) >= RECHECK_AFTER_MS;
}

/**
 * The error of a message failed because its recipient was suppressed after it was accepted: the words
 * an immediate send to them is refused with, and what became of this one.
 */
export function suppressedSinceAccepted(to: string, reason: SuppressionReason): string {
  const refusal = reason === 'sms_optout' ? `${to} has opted out of SMS` : `${to} is suppressed (${reason})`;
  return `${refusal}: not sent, the recipient was suppressed after the message was accepted`;
}
