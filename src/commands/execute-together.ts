import { deterministicEventId } from '../domain/event-id.js';
import { fold, type Decider, type DomainEvent } from '../domain/decider.js';
import { afterConflict, evolveAppended } from './execute.js';
import { WrongExpectedRevisionError, type AppendResult, type EventMetadata, type EventStore, type Position, type StreamAppend } from '../ports/event-store.js';

/*
 * Commands that write more than one thing, and what keeps each from stopping halfway:
 * - signup and first boot (accounts.ts): the account and its owner, executeTogether;
 * - provider event ingest: a bounce/complaint's outcome and its suppression, executeTogether; a
 *   parked event is applied, then unparked (applying it again appends nothing);
 * - webhook delivery retry: the event, then the side-effect row; the webhook-retries process manager
 *   makes the same row from the event when the process stops in between;
 * - sends (email, SMS): the cap slot, then the message stream; a failed append gives the slot back;
 * - contact import and SMS opt-out sync: many independent streams, each written whole (an import
 *   chunk in one transaction); the same request or the next sync writes only what is missing.
 */

/** One stream's part of a command that writes several: its decider, the command, where it goes. */
export interface Step<S = any, C = any, E extends DomainEvent = DomainEvent> {
  decider: Decider<S, C, E>;
  command: C;
  streamId: string;
}

export interface StepResult<S = any> {
  events: DomainEvent[];
  state: S;
  /** this stream's last appended event, or its last event when the step decided nothing new */
  position?: Position;
}

/**
 * The streams' appends as one step: one transaction where the store commits across streams
 * (appendMany), else stream after stream in the order given. That order is the contract for stores
 * that cannot commit across streams (EventStoreDB): the caller puts last the append that makes the
 * others reachable (a user after the account it names), so a run that stops halfway leaves only
 * events nothing reaches; and as the event ids are deterministic, the same command run again finds
 * what it wrote already and appends only the rest.
 */
export async function appendTogether(eventStore: EventStore, appends: StreamAppend[]): Promise<AppendResult[]> {
  // one stream needs no transaction of its own: append shares one with concurrent callers
  if (eventStore.appendMany && appends.length > 1) return eventStore.appendMany(appends);
  const results: AppendResult[] = [];
  for (const a of appends) results.push(await eventStore.append(a.streamId, a.events, { expectedRevision: a.expectedRevision }));
  return results;
}

/**
 * `execute` over several streams written as one step (appendTogether): every stream is read and
 * every decision made before anything is written, so a refused decision (a bad field, a taken
 * email) writes nothing; on a concurrent write to any of them, all are read and decided again.
 * `commandId` makes the event ids and marks the events: the same command run again skips the
 * streams it has already written and completes the others.
 */
export async function executeTogether(
  eventStore: EventStore,
  steps: Step[],
  options: { commandId: string; metadata?: EventMetadata; maxRetries?: number },
): Promise<StepResult[]> {
  const { commandId } = options;
  for (let attempt = 0; ; attempt++) {
    const histories = await Promise.all(steps.map((s) => eventStore.readStream(s.streamId)));
    const decided = steps.map((step, k) => {
      const state = fold(step.decider, histories[k]);
      // Written by this same command already (a run stopped halfway on a store without appendMany):
      // that part is done, and deciding it again would refuse it as a duplicate.
      if (histories[k].some((e) => e.metadata.commandId === commandId)) return { state, events: [] as DomainEvent[] };
      return { state, events: step.decider.decide(step.command, state) as DomainEvent[] };
    });
    const appends: StreamAppend[] = [];
    const appendedBy: number[] = [];
    decided.forEach(({ events }, k) => {
      if (events.length === 0) return;
      const { streamId } = steps[k];
      const revision = histories[k].length - 1;
      appendedBy.push(k);
      appends.push({
        streamId,
        expectedRevision: revision < 0 ? 'no_stream' : revision,
        events: events.map((e, i) => ({ id: deterministicEventId(streamId, commandId, String(i)), type: e.type, data: e.data, metadata: { ...options.metadata, commandId } })),
      });
    });
    let results: AppendResult[];
    try {
      results = appends.length ? await appendTogether(eventStore, appends) : [];
    } catch (err) {
      if (err instanceof WrongExpectedRevisionError && attempt < (options.maxRetries ?? 20)) {
        await afterConflict(attempt);
        continue;
      }
      throw err;
    }
    return decided.map(({ state, events }, k) => {
      const appended = appendedBy.indexOf(k);
      const history = histories[k];
      if (appended < 0) return { events, state, position: history[history.length - 1]?.position };
      const result = results[appended];
      const newState = evolveAppended(steps[k].decider, state, steps[k].streamId, history.length, events, result.position);
      return { events, state: newState, position: result.position };
    });
  }
}
