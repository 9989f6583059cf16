import type { Position } from '../ports/event-store.js';

/**
 * Waits until a projection has applied the event at `position`, so the caller's next request sees its
 * own write (e.g. a revoked key fails on the very next request, in every process).
 */
export type WaitForProjection = (projection: string, position: Position | undefined) => Promise<void>;
