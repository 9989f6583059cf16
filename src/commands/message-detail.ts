import { AppError } from '../domain/errors.js';
import { isMessageId, messageStream } from '../domain/messages/events.js';
import type { Principal } from '../domain/principal.js';
import type { EventStore } from '../ports/event-store.js';
import type { MessageQueries } from '../read-models/messages.js';
import type { WaitForProjection } from './read-your-writes.js';

/**
 * One message as `GET /api/messages/:id` shows it: its row and timeline from the messages read model,
 * and its bodies (`html` and `text`, or an SMS's `body`) from its queue event, the one place they are
 * kept: the read model leaves them out of its rows, which every list reads. Null once erased or expired.
 */
export function createMessageDetail(deps: { messages: MessageQueries; eventStore: EventStore; waitFor: WaitForProjection }) {
  return async function detail(principal: Principal, id: string) {
    const history = isMessageId(id) ? deps.eventStore.readStream(messageStream(id)) : Promise.resolve([]);
    history.catch(() => undefined); // awaited below; a read model's refusal may come first
    // the read model first: it answers 404 for a message this caller may not see
    const view = await deps.messages.get(principal, id).catch(async (err: unknown) => {
      // A message accepted a moment ago (its 201 answered) may not be in the read model yet: the
      // caller that just sent it reads it once the read model has caught up with its stream.
      const events = await history;
      if (!(err instanceof AppError && err.status === 404) || events.length === 0) throw err;
      await deps.waitFor('messages', events[events.length - 1].position);
      return deps.messages.get(principal, id);
    });
    const [queued] = await history;
    const data = (queued?.data ?? {}) as { html?: string | null; text?: string | null; body?: string | null };
    const bodies = view.channel === 'sms' ? { body: data.body ?? null } : { html: data.html ?? null, text: data.text ?? null };
    return { ...view, ...bodies };
  };
}
export type MessageDetail = ReturnType<typeof createMessageDetail>;
