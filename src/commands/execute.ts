import { deterministicEventId } from '../domain/event-id.js';
import { fold, type Decider, type DomainEvent } from '../domain/decider.js';
import {
  WrongExpectedRevisionError,
  type AppendResult,
  type EventMetadata,
  type EventStore,
  type Position,
  type RecordedEvent,
} from '../ports/event-store.js';

export interface ExecuteOptions {
  eventStore: EventStore;
  streamId: string;
  /**
   * Identifies this command invocation. Event ids derive from it, so a retried command (same
   * commandId) appends nothing new. Defaults to a random id (not idempotent).
   */
  commandId?: string;
  metadata?: EventMetadata;
  maxRetries?: number;
  /**
   * The stream as the caller has already read it (all of it): the first attempt decides on it instead
   * of reading again; a concurrent write still makes the next attempt reload. `[]` for a new stream.
   */
  history?: RecordedEvent[];
}

export interface ExecuteResult<S, E> {
  events: E[];
  /** state after the new events */
  state: S;
  /**
   * Where a reader must have caught up to see the outcome: the last appended event, or, when the
   * decision produced nothing (already suppressed, already revoked), the stream's last event, which
   * may not be projected yet; undefined only for a stream that does not exist.
   */
  position?: Position;
  revision: number;
}

/**
 * Load a stream, decide, append with the expected revision; on a concurrent write, reload and decide
 * again. This is every command handler's spine.
 */
export async function execute<S, C, E extends DomainEvent>(
  decider: Decider<S, C, E>,
  command: C,
  options: ExecuteOptions,
): Promise<ExecuteResult<S, E>> {
  const { eventStore, streamId } = options;
  const commandId = options.commandId ?? crypto.randomUUID();
  for (let attempt = 0; ; attempt++) {
    const history = attempt === 0 && options.history ? options.history : await eventStore.readStream(streamId);
    const state = fold(decider, history);
    const events = decider.decide(command, state);
    const revision = history.length - 1;
    // A repeated command (a second bounce, a double click) must not answer before the first one's
    // effect is readable: it waits for the same position the first caller waits for.
    if (events.length === 0) return { events, state, revision, position: history[history.length - 1]?.position };
    let result: AppendResult;
    try {
      result = await eventStore.append(
        streamId,
        events.map((e, i) => ({
          id: deterministicEventId(streamId, commandId, String(i)),
          type: e.type,
          data: e.data,
          metadata: { ...options.metadata, commandId },
        })),
        { expectedRevision: revision < 0 ? 'no_stream' : revision },
      );
    } catch (err) {
      if (err instanceof WrongExpectedRevisionError && attempt < (options.maxRetries ?? 20)) {
        await afterConflict(attempt);
        continue;
      }
      throw err;
    }
    const newState = evolveAppended(decider, state, streamId, revision + 1, events, result.position);
    return { events, state: newState, position: result.position, revision: result.nextRevision };
  }
}

/**
 * A wait before deciding again after another writer got to the stream first: random, and longer the
 * more often it happened, so that forty requests changing one record at once take turns instead of
 * all reading, deciding and colliding again in step until their retries run out.
 */
export function afterConflict(attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(100, 2 ** attempt)));
}

/** The state after `events`, just appended at `firstRevision` onwards: they are evolved as they were recorded. */
export function evolveAppended<S>(decider: Decider<S, any, any>, state: S, streamId: string, firstRevision: number, events: DomainEvent[], position: Position): S {
  return events.reduce(
    (s, e, i) =>
      decider.evolve(s, {
        id: '',
        streamId,
        revision: firstRevision + i,
        type: e.type,
        data: e.data,
        metadata: {},
        schemaVersion: 1,
        recordedAt: new Date(),
        position,
      }),
    state,
  );
}
