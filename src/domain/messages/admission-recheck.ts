import type { SuppressionReason } from '../suppression/suppression.js';

/**
 * A send is admitted against the suppression list and the account's verified senders as they stand at
 * that moment. A provider call that comes much later (a scheduled send at its time, a retry, a
 * campaign's message that waited its turn) would otherwise reach an address that unsubscribed, bounced
 * or complained in between, or send from a domain the account has removed since; an immediate send of
 * either is refused. Such a call looks at both again first. An immediate send is called milliseconds
 * after its admission looked: it is not looked at twice, so the hot path keeps its one statement.
 */
export const RECHECK_AFTER_MS = 5_000;

/**
 * Whether the provider call at `now` looks at the admission's changing facts again: a scheduled send
 * always (whatever the clocks of the processes that accepted it and that send it say), any other
 * message once it has waited RECHECK_AFTER_MS since it was accepted.
 */
export function rechecksAdmission(queued: { queuedAt: string; sendAt?: string | null }, now: string): boolean {
  return Boolean(queued.sendAt) || Date.parse(now) - Date.parse(queued.queuedAt) >= RECHECK_AFTER_MS;
}

/** What the late look found: why the recipient is suppressed now (null: they are not), and whether an email's sender is still verified. */
export interface DueFacts {
  suppressedFor: SuppressionReason | null;
  senderVerified: boolean;
}

/**
 * Why a message due now is not sent after all, in the words an immediate send would be refused with
 * and what became of this one; null when it goes out. The recipient's suppression comes first, as at
 * admission. An SMS has no sender to verify.
 */
export function lateRefusal(queued: { to: string; fromEmail?: string }, facts: DueFacts): string | null {
  if (facts.suppressedFor) return suppressedSinceAccepted(queued.to, facts.suppressedFor);
  if (queued.fromEmail !== undefined && !facts.senderVerified) {
    return `${queued.fromEmail} is not verified for sending: not sent, the sender was no longer verified when the message was due`;
  }
  return null;
}

function suppressedSinceAccepted(to: string, reason: SuppressionReason): string {
  const refusal = reason === 'sms_optout' ? `${to} has opted out of SMS` : `${to} is suppressed (${reason})`;
  return `${refusal}: not sent, the recipient was suppressed after the message was accepted`;
}
