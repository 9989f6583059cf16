import type { EventMetadata, RecordedEvent } from '../ports/event-store.js';

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

/** Where a request comes from, before it is known who sent it (a key is checked with the send's facts). */
export type Origin = Omit<Caller, 'actor'>;

/** What caused an event besides who: for a request, the request is both its cause and what correlates it. */
export type Cause = Omit<EventMetadata, 'actor'>;

export const causeOf = (origin: Origin): Cause => ({
  clientIp: origin.clientIp,
  ...(origin.requestId ? { correlationId: origin.requestId, causationId: origin.requestId } : {}),
});

export const callerMetadata = (caller: Caller): EventMetadata => ({ actor: caller.actor, ...causeOf(caller) });

/**
 * What a stream's later events correlate with: the request (or campaign) behind its first event, so a
 * message's whole history, its send, the provider's answers and the recipient's opens, is found by the
 * request that sent it.
 */
export function correlationOf(first: RecordedEvent | undefined): Cause {
  const id = first?.metadata?.correlationId;
  return typeof id === 'string' ? { correlationId: id } : {};
}
