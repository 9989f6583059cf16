import type { RefusalReason } from '../messages/send-admission.js';
import type { CampaignCommand, Progress } from './campaign.js';
import { nextUtcMidnight } from './personalise.js';

/**
 * What became of one contact of a fan-out step: queued (now, or by an earlier run of the step), skipped,
 * or where the campaign stops (`template_failed`: its template refused to render for the contact, as
 * one rendering far more than it is made of; a send would refuse it alike).
 */
export type ContactOutcome = 'queued' | 'skipped' | 'daily_send_cap' | 'sender_not_verified' | 'template_failed';

/** A contact is sent to only while subscribed and with an address (an erased contact keeps none). */
export const isReachable = (contact: { status: string; email: string | null }): boolean => contact.status === 'subscribed' && Boolean(contact.email);

/**
 * What a refused send means for the campaign: a suppressed address, or a contact erased or no longer
 * subscribed by the time its message was queued, is a recipient to skip; the
 * account's daily cap, or a sender no longer verified, stops it (the one resumes by itself, the other
 * needs an admin). Null for a refusal a campaign's send cannot meet: an error, not an outcome.
 */
export function outcomeOfRefusal(reason: RefusalReason): ContactOutcome | null {
  switch (reason) {
    case 'suppressed':
    case 'not_subscribed':
      return 'skipped';
    case 'account_daily_limit':
      return 'daily_send_cap';
    case 'unverified_sender':
      return 'sender_not_verified';
    default:
      return null;
  }
}

type StepRecord = Pick<Extract<CampaignCommand, { kind: 'recordProgress' }>, 'progress' | 'done' | 'stoppedBy'> & { skippedIds: string[] };

/**
 * What a step records, from its contacts' outcomes in id order: progress up to the first contact the
 * campaign stops at (whoever came after it and was queued anyway is found queued by the next step),
 * done when nothing stopped it and no contact is left after the page.
 */
export function stepRecord(step: {
  fromCursor: string | null;
  contacts: { id: string; outcome: ContactOutcome; unfilled: boolean }[];
  /** the audience has contacts after this step's page */
  more: boolean;
  now: Date;
}): StepRecord {
  const stopAt = step.contacts.findIndex((c) => c.outcome !== 'queued' && c.outcome !== 'skipped');
  const reached = stopAt < 0 ? step.contacts : step.contacts.slice(0, stopAt);
  const progress: Progress = {
    cursor: reached.length ? reached[reached.length - 1].id : step.fromCursor,
    queued: reached.filter((c) => c.outcome === 'queued').length,
    skipped: reached.filter((c) => c.outcome === 'skipped').length,
    unfilled: reached.filter((c) => c.unfilled).length,
  };
  // named, so that the late walk tells them apart from the ones that joined the audience behind the cursor
  const skippedIds = reached.filter((c) => c.outcome === 'skipped').map((c) => c.id);
  const stop = stopAt < 0 ? undefined : step.contacts[stopAt].outcome;
  if (stop === 'daily_send_cap') return { progress, skippedIds, done: false, stoppedBy: { reason: 'daily_send_cap', resumeAt: nextUtcMidnight(step.now).toISOString() } };
  if (stop === 'sender_not_verified' || stop === 'template_failed') return { progress, skippedIds, done: false, stoppedBy: { reason: stop } };
  return { progress, skippedIds, done: !step.more };
}
