import type { Db } from '../adapters/db/knex.js';
import { checkpointPosition } from '../adapters/db/checkpoint-position.js';
import { AppError } from '../domain/errors.js';
import { comparePositions, type Position } from '../ports/event-store.js';

/** A read model has not caught up with what the caller knows exists (no worker, or one just starting). */
export const readModelBehind = (name: string) => new AppError(503, `the ${name} read model is not up to date yet; is a worker running?`);

/**
 * Read-your-writes across processes: waits until a projection's active generation has applied an
 * event position, by reading its checkpoint (cheap: one primary-key lookup per poll).
 */
export function createProjectionWaiter(deps: { db: Db }) {
  async function checkpoint(name: string): Promise<Position | null> {
    const row = await deps
      .db('projection_checkpoints as c')
      .join('projection_registry as r', function () {
        this.on('r.name', '=', 'c.name').andOn('r.active_generation', '=', 'c.generation');
      })
      .where('c.name', name)
      .first('c.commit_pos', 'c.prepare_pos');
    return row ? checkpointPosition(row) : null;
  }

  return {
    async waitFor(name: string, position: Position, timeoutMs: number): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      let delay = 2;
      for (;;) {
        const cp = await checkpoint(name);
        if (cp && comparePositions(cp, position) >= 0) return;
        if (Date.now() > deadline) {
          throw readModelBehind(name);
        }
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 50);
      }
    },
  };
}
