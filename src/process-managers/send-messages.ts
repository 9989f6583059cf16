import { MESSAGE_STREAM_PREFIX } from '../domain/messages/events.js';
import type { ProcessManager } from './runner.js';

export const SEND_JOB = 'provider.send';
/**
 * A campaign's messages wait in a queue of their own, worked by fewer hands: a 100,000-message fan-out
 * never stands between a password reset and the provider.
 */
export const CAMPAIGN_SEND_JOB = 'provider.send.campaign';

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
      kind: e.data.campaignId ? CAMPAIGN_SEND_JOB : SEND_JOB,
      payload: { messageId: e.data.messageId },
      runAfter: e.data.sendAt ? new Date(e.data.sendAt) : new Date(),
    }));
  },
};
