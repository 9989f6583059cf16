import type { EventMetadata, RecordedEvent } from '../../src/ports/event-store.js';
import { fold, type Decider, type DomainEvent } from '../../src/domain/decider.js';

/** Recorded events for given-events/when-command/then-events specs; an event may bring its metadata (the sealing store's `person`). */
export function recorded(streamId: string, events: (DomainEvent & { metadata?: EventMetadata })[]): RecordedEvent[] {
  return events.map((e, i) => ({
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    streamId,
    revision: i,
    type: e.type,
    data: e.data,
    metadata: e.metadata ?? {},
    schemaVersion: 1,
    recordedAt: new Date(0),
    position: { commit: 1n, prepare: BigInt(i + 1) },
  }));
}

/** given(events) → when(command) → the new events, or the thrown error */
export function given<S, C, E extends DomainEvent>(decider: Decider<S, C, E>, events: (DomainEvent & { metadata?: EventMetadata })[] = []) {
  const state = fold(decider, recorded('s', events));
  return {
    state,
    when: (command: C) => decider.decide(command, state),
  };
}
