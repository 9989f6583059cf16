import { attachmentSummary, type QueuedAttachment } from '../domain/email/attachments.js';
import { isMessageId, messageStream } from '../domain/messages/events.js';
import { notFound } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import { messageDecider, type MessageState } from '../domain/messages/message.js';
import type { EventStore } from '../ports/event-store.js';

/** The part of a message's state an auditor reads (the decider's own fold, not the read model's). */
export function stateSummary(state: MessageState) {
  return {
    status: state.status,
    providerMessageId: state.providerMessageId,
    attempts: state.attempts,
    providerEvents: state.seenProviderEvents.size,
  };
}

export interface ReplayedEvent {
  type: string;
  version: number;
  occurredAt: string;
  actor: string | null;
  data: unknown;
  metadata: Record<string, unknown>;
  /** the message's state right after this event */
  state: ReturnType<typeof stateSummary>;
}

/** An event's data as shown to a person: attachments by name, type and size, not megabytes of base64. */
function withoutAttachmentBytes(data: Record<string, any>): unknown {
  if (!Array.isArray(data.attachments)) return data;
  return { ...data, attachments: (data.attachments as QueuedAttachment[]).map(attachmentSummary) };
}

/**
 * Every event of a message's stream in order, each with its time, actor, metadata and the state it
 * led to, folded by the same decider that made the decisions. [] when the stream does not exist.
 */
export async function replayMessage(eventStore: EventStore, messageId: string): Promise<{ accountId: string | null; events: ReplayedEvent[] }> {
  const events = await eventStore.readStream(messageStream(messageId));
  let state = messageDecider.initialState;
  const replayed = events.map((e) => {
    state = messageDecider.evolve(state, e);
    const { actor, ...metadata } = e.metadata;
    return {
      type: e.type,
      version: e.revision,
      occurredAt: e.recordedAt.toISOString(),
      actor: typeof actor === 'string' ? actor : null,
      data: withoutAttachmentBytes(e.data),
      metadata,
      state: stateSummary(state),
    };
  });
  return { accountId: state.queued?.accountId ?? null, events: replayed };
}

/** An auditor's printout of one message (npm run replay -- <messageId>). */
export async function formatReplay(eventStore: EventStore, messageId: string): Promise<string[]> {
  const { events } = await replayMessage(eventStore, messageId);
  if (events.length === 0) return [`No events for message ${messageId}.`];
  const lines = [`Message ${messageId}: ${events.length} events`];
  for (const e of events) {
    lines.push(
      `#${e.version} ${e.occurredAt} ${e.type} by ${e.actor ?? 'unknown'}`,
      `    data:     ${JSON.stringify(e.data)}`,
      `    metadata: ${JSON.stringify(e.metadata)}`,
      `    state:    ${JSON.stringify(e.state)}`,
    );
  }
  return lines;
}

/** A message's events in order, each with actor, metadata and the state it led to (auditors): its own account's only. */
export function createMessageHistory(deps: { eventStore: EventStore }) {
  return async function history(principal: Principal, id: string): Promise<ReplayedEvent[]> {
    const { accountId, events } = isMessageId(id) ? await replayMessage(deps.eventStore, id) : { accountId: null, events: [] };
    if (events.length === 0 || accountId !== principal.accountId) throw notFound(`message ${id} not found`);
    return events;
  };
}
export type MessageHistory = ReturnType<typeof createMessageHistory>;
