import { CAMPAIGN_STREAM_PREFIX } from '../domain/campaigns/campaign.js';
import type { ProcessManager } from './runner.js';

export const CAMPAIGN_FANOUT_JOB = 'campaign.fanout';

/**
 * Sets a campaign's fan-out going: a start or a resume is one side effect (named after its event, so it
 * is recorded once however often the log is read) whose job runs the steps until the campaign is sent
 * or no longer sending (paused, cancelled); see src/jobs/campaign-fanout.ts.
 */
export const campaignFanoutManager: ProcessManager = {
  name: 'campaign-fanout',
  streamPrefixes: [CAMPAIGN_STREAM_PREFIX],
  eventTypes: ['CampaignStarted', 'CampaignResumed'],
  async handle(events) {
    // a resume back to its schedule starts nothing yet: its start does, at the time
    return events.filter((e) => !(e.data as { rescheduledFor?: string }).rescheduledFor).map((e) => ({
      id: `campaign-fanout:${e.id}`,
      kind: CAMPAIGN_FANOUT_JOB,
      payload: { campaignId: (e.data as { campaignId: string }).campaignId },
      runAfter: new Date(),
    }));
  },
};
