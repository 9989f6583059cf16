import { MESSAGE_STREAM_PREFIX } from '../domain/messages/events.js';
import type { ProcessManager } from './runner.js';

export const SEND_JOB = 'provider.send';

/** Turns every queued message into one provider-send side effect. */
export const sendMessagesManager: ProcessManager = {
  name: 'send-messages',
  streamPrefixes: [MESSAGE_STREAM_PREFIX],
  eventTypes: ['EmailQueued', 'SmsQueued'],
  async handle(events) {
    return events.map((e) => ({
      id: `send:${e.data.messageId}`,
      kind: SEND_JOB,
      payload: { messageId: e.data.messageId },
      runAfter: new Date(),
    }));
  },
};
