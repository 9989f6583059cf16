import { AppError } from '../../domain/errors.js';
import type { Db } from './knex.js';
import { LOCK_NOT_AVAILABLE, whileLocked } from './session-lock.js';

/** How long a pause or cancel waits for a step (one takes a second or two). */
const COMMAND_WAIT_MS = 30_000;

/**
 * A campaign's fan-out steps, and the pause or cancel that stops them, one at a time across every
 * process: a step runs from its look at the campaign's status to the record of what it queued, so a
 * pause answered while one ran would have seen messages queued after it. A step waits its turn; a
 * command waits a bounded time (a step whose worker hangs holds the turn until its connection goes)
 * and is then answered 503, to be asked again.
 */
export function createCampaignTurns(db: Db) {
  // the name a run of the fan-out held for all its steps before, so a worker of that version and one
  // of this one never step together during a rolling upgrade
  const name = (campaignId: string) => `campaign-fanout:${campaignId}`;
  return {
    step: <T>(campaignId: string, work: () => Promise<T>): Promise<T> => whileLocked(db, name(campaignId), work),
    async command<T>(campaignId: string, work: () => Promise<T>): Promise<T> {
      try {
        return await whileLocked(db, name(campaignId), work, { waitMs: COMMAND_WAIT_MS });
      } catch (err) {
        if ((err as { code?: string }).code !== LOCK_NOT_AVAILABLE) throw err;
        throw new AppError(503, `campaign ${campaignId} is in a step of its fan-out that has not ended within ${COMMAND_WAIT_MS / 1000} s: ask again`, undefined, { 'retry-after': '5' });
      }
    },
  };
}
export type CampaignTurns = ReturnType<typeof createCampaignTurns>;
