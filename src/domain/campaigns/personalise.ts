import { createHash } from 'node:crypto';

/**
 * The one message id a contact gets in a campaign: a fan-out step run twice (a worker killed, a second
 * worker, a resume) names the same message, and the message stream takes it only once.
 */
export function campaignMessageId(campaignId: string, contactId: string): string {
  return `cm${createHash('sha256').update(`${campaignId}\n${contactId}`).digest('hex').slice(0, 30)}`;
}

/** The next 00:00 UTC after `now`: when the account's daily cap opens again. */
export function nextUtcMidnight(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
}
