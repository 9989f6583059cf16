import type { EventMetadata } from '../ports/event-store.js';

/**
 * Who asks for a command, as the events it causes record it: the actor (`user:<id>`, `apikey:<id>`),
 * the client's address, and the request that carried it (the events' correlation id). The audit trail
 * reads these back.
 */
export interface Caller {
  actor: string;
  clientIp: string | null;
  requestId?: string;
}

export const callerMetadata = (caller: Caller): EventMetadata => ({
  actor: caller.actor,
  clientIp: caller.clientIp,
  ...(caller.requestId ? { correlationId: caller.requestId } : {}),
});
