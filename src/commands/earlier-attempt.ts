import { fold } from '../domain/decider.js';
import { messageStream } from '../domain/messages/events.js';
import { messageDecider } from '../domain/messages/message.js';
import type { EventStore } from '../ports/event-store.js';

/**
 * What an earlier attempt of an idempotent request queued as `messageId`, or null: the attempt's
 * process stopped (or lost the database) after the append and before its answer was recorded. Its
 * retry answers that message as it is: admitting it again would be refused by what happened to it
 * since (its own bounce suppressed the address, its cap slot filled the key's day) or take a second
 * cap slot for it.
 */
export async function queuedByEarlierAttempt(eventStore: EventStore, messageId: string) {
  return fold(messageDecider, await eventStore.readStream(messageStream(messageId))).queued;
}
