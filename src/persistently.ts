import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Runs `write`, trying again after each of a few growing pauses (five seconds in all) when it throws:
 * for the bookkeeping a run does after a failure that may have come from the same cause (a dropped
 * database connection), which would otherwise be left for a lease or an expiry to clear up.
 */
export async function persistently<T>(write: () => Promise<T>): Promise<T> {
  for (const pauseMs of [250, 1_000, 4_000]) {
    try {
      return await write();
    } catch {
      await sleep(pauseMs);
    }
  }
  return write();
}
