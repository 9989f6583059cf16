import type { Position } from '../../ports/event-store.js';

/** The log position a checkpoint row holds (projection and process-manager checkpoints alike). */
export const checkpointPosition = (row: Record<string, any>): Position => ({
  commit: BigInt(row.commit_pos),
  prepare: BigInt(row.prepare_pos),
});
