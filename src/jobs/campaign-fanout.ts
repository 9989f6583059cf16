import type { Logger } from 'pino';
import type { Db } from '../adapters/db/knex.js';
import type { CampaignFanout } from '../commands/campaign-fanout.js';
import type { Job, JobQueue } from '../ports/job-queue.js';
import { createSideEffectLeases, rescheduleSideEffect, type SideEffectJob } from '../adapters/db/side-effects.js';
import type { CampaignTurns } from '../adapters/db/campaign-turns.js';

const RETRY_DELAY_MS = 5_000;

/**
 * Runs a campaign's fan-out, step after step, under a lease on the side effect that asked for it (a
 * start or a resume), renewed while it runs: a second delivery of the job finds it taken; a worker
 * killed mid-step loses it when the lease ends, and the run that takes it over goes on from the last
 * recorded step (that step's messages have their ids already, so it queues only the ones still missing).
 * Each step takes the campaign's turn: a campaign paused and resumed at once has a run per resume, and
 * two on one step would both send the messages neither had recorded yet, taking the daily cap's slots
 * twice for them; a pause or cancel waits for the step running, so nothing is queued after its answer.
 */
export function createCampaignFanoutHandler(deps: { db: Db; queue: JobQueue; fanout: CampaignFanout; turns: CampaignTurns; leaseMs?: number; logger?: Logger }) {
  const leases = createSideEffectLeases(deps.db, deps.queue, { leaseMs: deps.leaseMs, logger: deps.logger });
  return async function handle(job: Job<SideEffectJob & { campaignId: string }>): Promise<void> {
    const { campaignId, sideEffectId } = job.data;
    if (!(await leases.claim(job.data))) return;
    try {
      while (await deps.turns.step(campaignId, () => deps.fanout.step(campaignId, sideEffectId)));
    } catch (err) {
      deps.logger?.warn({ err, campaignId }, 'campaign fan-out step failed; trying again');
      await rescheduleSideEffect(deps.db, deps.queue, sideEffectId, new Date(Date.now() + RETRY_DELAY_MS));
      return;
    } finally {
      leases.letGo(sideEffectId);
    }
    await leases.markDone(sideEffectId);
  };
}
