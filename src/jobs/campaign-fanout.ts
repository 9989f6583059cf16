import type { Logger } from 'pino';
import type { Db } from '../adapters/db/knex.js';
import type { CampaignFanout } from '../commands/campaign-fanout.js';
import type { Job, JobQueue } from '../ports/job-queue.js';
import { createSideEffectLeases, rescheduleSideEffect, type SideEffectJob } from '../process-managers/side-effects.js';

/** How long a run of the fan-out may hold its campaign before another worker takes it over. */
const LEASE_MS = 60_000;
/** A run hands over to a fresh job after this long, well inside its lease. */
const RUN_BUDGET_MS = 15_000;
const RETRY_DELAY_MS = 5_000;

/**
 * Runs a campaign's fan-out, step after step, under a lease on the side effect that asked for it (a
 * start or a resume): a second delivery of the job finds it taken; a worker killed mid-step leaves it to
 * whoever takes it when the lease ends, and that run goes on from the last recorded step (the step's
 * messages have their ids already, so it queues only the ones still missing). A long fan-out hands over
 * to a new job of the same effect every RUN_BUDGET_MS, so no run outlives its lease.
 */
export function createCampaignFanoutHandler(deps: { db: Db; queue: JobQueue; fanout: CampaignFanout; leaseMs?: number; runBudgetMs?: number; logger?: Logger }) {
  const leases = createSideEffectLeases(deps.db, deps.queue);
  return async function handle(job: Job<SideEffectJob & { campaignId: string }>): Promise<void> {
    const { campaignId, sideEffectId } = job.data;
    if (!(await leases.claim(job.data, deps.leaseMs ?? LEASE_MS))) return;
    const until = Date.now() + (deps.runBudgetMs ?? RUN_BUDGET_MS);
    try {
      while (await deps.fanout.step(campaignId, sideEffectId)) {
        if (Date.now() > until) {
          await rescheduleSideEffect(deps.db, deps.queue, sideEffectId, new Date());
          return;
        }
      }
    } catch (err) {
      deps.logger?.warn({ err, campaignId }, 'campaign fan-out step failed; trying again');
      await rescheduleSideEffect(deps.db, deps.queue, sideEffectId, new Date(Date.now() + RETRY_DELAY_MS));
      return;
    }
    await leases.markDone(sideEffectId);
  };
}
