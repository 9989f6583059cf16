import type { Db } from '../adapters/db/knex.js';
import { campaignDecider, campaignStream } from '../domain/campaigns/campaign.js';
import type { EventStore } from '../ports/event-store.js';
import { execute } from './execute.js';
import { dueCampaigns } from '../read-models/campaigns.js';

/**
 * Starts scheduled campaigns whose time has come and resumes those the daily cap paused once their day
 * is over. Every worker may run it at once: the decisions make a second run append nothing.
 */
export function createCampaignTimers(deps: { db: Db; eventStore: EventStore; clock: () => Date }) {
  return async function runTimers(): Promise<number> {
    const at = deps.clock().toISOString();
    const due = await dueCampaigns(deps.db, at);
    for (const c of due) {
      await execute(campaignDecider, c.status === 'scheduled' ? { kind: 'start', now: at } : { kind: 'resumeAfterCap', now: at }, {
        eventStore: deps.eventStore,
        streamId: campaignStream(c.id),
        metadata: { actor: 'system:campaign-timers', correlationId: c.id },
      });
    }
    return due.length;
  };
}
