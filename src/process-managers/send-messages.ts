import { MESSAGE_STREAM_PREFIX } from '../domain/messages/events.js';
import type { ProcessManager } from './runner.js';

export const SEND_JOB = 'provider.send';

/**
 * Turns every queued message into one provider-send side effect, due at once or, for a scheduled send,
 * at its sendAt: the job is queued with that delay (pg-boss and BullMQ both keep delayed jobs across
 * restarts), and the sweeper only looks at effects past their due time, so nothing runs it early.
 */
export const sendMessagesManager: ProcessManager = {
  name: 'send-messages',
  streamPrefixes: [MESSAGE_STREAM_PREFIX],
  eventTypes: ['EmailQueued', 'SmsQueued'],
  async handle(events) {
    return events.map((e) => ({
      id: `send:${e.data.messageId}`,
      kind: SEND_JOB,
      payload: { messageId: e.data.messageId },
      runAfter: e.data.sendAt ? new Date(e.data.sendAt) : new Date(),
    }));
  },
};
