import type { RecordedEvent } from '../ports/event-store.js';

/** An event a decision produces, before it gets an id and metadata. */
export interface DomainEvent<T extends string = string, D = unknown> {
  type: T;
  data: D;
}

/**
 * A stream's decision logic, pure: `evolve` folds recorded events into state, `decide` turns state
 * and a command into new events or throws an AppError.
 */
export interface Decider<S, C, E extends DomainEvent = DomainEvent> {
  initialState: S;
  evolve(state: S, event: RecordedEvent): S;
  decide(command: C, state: S): E[];
}

export function fold<S>(decider: Pick<Decider<S, unknown>, 'initialState' | 'evolve'>, events: RecordedEvent[]): S {
  return events.reduce(decider.evolve, decider.initialState);
}

/**
 * The decider of a stream that holds one fact, recorded once: the same command run again (a retry)
 * records nothing new. An export or an import noted for the audit trail is one.
 */
export function recordedOnce<T extends string, D>(type: T): Decider<{ recorded: boolean }, D, DomainEvent<T, D>> {
  return {
    initialState: { recorded: false },
    evolve: (state, event) => (event.type === type ? { recorded: true } : state),
    decide: (data, state) => (state.recorded ? [] : [{ type, data }]),
  };
}
