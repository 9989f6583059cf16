import { messageStream } from '../domain/messages/events.js';
import { messageDecider, type MessageState } from '../domain/messages/message.js';
import type { EventStore } from '../ports/event-store.js';

function summary(state: MessageState) {
  return JSON.stringify({ status: state.status, providerMessageId: state.providerMessageId, attempts: state.attempts, providerEvents: state.seenProviderEvents.size });
}

/** An auditor's view of one message: each event with its time, actor and metadata, and the state after it. */
export async function formatReplay(eventStore: EventStore, messageId: string): Promise<string[]> {
  const events = await eventStore.readStream(messageStream(messageId));
  if (events.length === 0) return [`No events for message ${messageId}.`];
  const lines = [`Message ${messageId}: ${events.length} events`];
  let state = messageDecider.initialState;
  for (const e of events) {
    state = messageDecider.evolve(state, e);
    const { actor, ...metadata } = e.metadata;
    lines.push(
      `#${e.revision} ${e.recordedAt.toISOString()} ${e.type} by ${String(actor ?? 'unknown')}`,
      `    data:     ${JSON.stringify(e.data)}`,
      `    metadata: ${JSON.stringify(metadata)}`,
      `    state:    ${summary(state)}`,
    );
  }
  return lines;
}
