import type { CampaignEvent, CampaignState } from './campaign.js';

/** A template and a sender to look up again, as a send would (either absent: nothing to check of it). */
export interface SendingChecks {
  templateId?: string;
  fromEmail?: string;
}

/**
 * What a decision of the campaign's decider would send from, to be checked before it is recorded: the
 * template and sender of a campaign it starts or schedules, and those a change sets (only what the
 * change changes: a campaign paused for its deleted template takes a new sender alone). Decided on
 * the events, so a change the status refuses is its 409 before any of this, and a change to the same
 * value (no event) checks nothing.
 */
export function sendingChecks(state: CampaignState, events: CampaignEvent[]): SendingChecks {
  const checks: SendingChecks = {};
  for (const event of events) {
    if (event.type === 'CampaignStarted' || event.type === 'CampaignScheduled') {
      checks.templateId = state.definition!.templateId;
      checks.fromEmail = state.definition!.fromEmail;
    } else if (event.type === 'CampaignChanged') {
      const { templateId, fromEmail } = event.data.changes;
      if (templateId !== undefined) checks.templateId = templateId;
      if (fromEmail !== undefined) checks.fromEmail = fromEmail;
    }
  }
  return checks;
}
