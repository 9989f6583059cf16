import { AppError } from '../../domain/errors.js';
import type { Db } from './knex.js';
import { LOCK_NOT_AVAILABLE, whileLocked } from './session-lock.js';

/** How long a pause or cancel waits for a step (one takes a second or two). */
const COMMAND_WAIT_MS = 30_000;
/**
 * Commands of one process waiting for a turn at once: each holds a connection of the pool while it
 * waits, and the one that gets the turn needs more to run; eleven pauses at once held all ten of an
 * API's connections, so every request of that process waited out the 30 s.
 */
const WAITING_AT_ONCE = 2;

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
  let waiting = 0;
  const queued: (() => void)[] = [];
  const busy = (campaignId: string) =>
    new AppError(503, `campaign ${campaignId} is in a step of its fan-out that has not ended within ${COMMAND_WAIT_MS / 1000} s: ask again`, undefined, { 'retry-after': '5' });

  /** A place among the commands waiting with a connection, by `deadline`; false when none came. */
  async function place(deadline: number): Promise<boolean> {
    if (waiting < WAITING_AT_ONCE) {
      waiting++;
      return true;
    }
    return new Promise<boolean>((resolve) => {
      const handOver = () => {
        clearTimeout(timer);
        resolve(true); // the place of the one leaving, whose count it keeps
      };
      const timer = setTimeout(() => {
        queued.splice(queued.indexOf(handOver), 1);
        resolve(false);
      }, deadline - Date.now());
      queued.push(handOver);
    });
  }
  function leave() {
    const next = queued.shift();
    if (next) next();
    else waiting--;
  }

  return {
    step: <T>(campaignId: string, work: () => Promise<T>): Promise<T> => whileLocked(db, name(campaignId), work),
    async command<T>(campaignId: string, work: () => Promise<T>): Promise<T> {
      const deadline = Date.now() + COMMAND_WAIT_MS;
      if (!(await place(deadline))) throw busy(campaignId);
      let placed = true;
      try {
        return await whileLocked(
          db,
          name(campaignId),
          () => {
            // the turn is had: the place goes to the next command waiting
            leave();
            placed = false;
            return work();
          },
          { waitMs: Math.max(1, deadline - Date.now()) },
        );
      } catch (err) {
        if ((err as { code?: string }).code !== LOCK_NOT_AVAILABLE) throw err;
        throw busy(campaignId);
      } finally {
        if (placed) leave();
      }
    },
  };
}
export type CampaignTurns = ReturnType<typeof createCampaignTurns>;
