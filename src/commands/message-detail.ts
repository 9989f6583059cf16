import { messageStream } from '../domain/messages/events.js';
import type { Principal } from '../domain/principal.js';
import type { EventStore } from '../ports/event-store.js';
import type { MessageQueries } from '../read-models/messages.js';

/**
 * One message as `GET /api/messages/:id` shows it: its row and timeline from the messages read model,
 * and its bodies (`html` and `text`, or an SMS's `body`) from its queue event, the one place they are
 * kept: the read model leaves them out of its rows, which every list reads. Null once erased or expired.
 */
export function createMessageDetail(deps: { messages: MessageQueries; eventStore: EventStore }) {
  return async function detail(principal: Principal, id: string) {
    // the read model first: it answers 404 for a message this caller may not see
    const view = await deps.messages.get(principal, id);
    const [queued] = await deps.eventStore.readStream(messageStream(id));
    const data = (queued?.data ?? {}) as { html?: string | null; text?: string | null; body?: string | null };
    const bodies = view.channel === 'sms' ? { body: data.body ?? null } : { html: data.html ?? null, text: data.text ?? null };
    return { ...view, ...bodies };
  };
}
export type MessageDetail = ReturnType<typeof createMessageDetail>;
