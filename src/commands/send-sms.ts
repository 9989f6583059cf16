import { createId } from '../cuid.js';
import { capScopes, utcDay, type SendCounters } from '../adapters/db/send-counters.js';
import { messageStream, type SmsQueued } from '../domain/messages/events.js';
import { messageDecider } from '../domain/messages/message.js';
import { admitSmsSend, checkSmsInput, MAX_SMS_SEGMENTS, type SmsSendFacts } from '../domain/messages/send-admission.js';
import { actorOf, type Principal } from '../domain/principal.js';
import type { EventStore } from '../ports/event-store.js';
import type { PersonOf } from '../ports/key-store.js';
import { admitSend } from './admit-send.js';
import { queuedByEarlierAttempt } from './earlier-attempt.js';
import type { Cause } from './caller.js';
import { NO_METRICS, type Metrics } from '../ports/metrics.js';
import { execute } from './execute.js';
import { smsSendFacts, type SmsSendFactsRow } from '../read-models/send-facts.js';

export { MAX_SMS_SEGMENTS };

interface SmsFactsRequest {
  principal: Principal;
  to: string;
}

/**
 * SendSms: every 400 of docs/api.md's SMS list with a message saying which rule failed, then the caps, then
 * `SmsQueued` on a new message stream (same stream, history and status model as email).
 */
export function createSendSms(deps: { eventStore: EventStore; counters: SendCounters; provider: 'sns' | 'sandbox'; personOf: PersonOf; metrics?: Metrics }) {
  const metrics = deps.metrics ?? NO_METRICS;
  const refused = (reason: string) => metrics.messageRefused('sms', reason);
  // A send never joins a statement already running, so an opt-out recorded before it was asked is seen.
  const facts = deps.counters.factBatches<SmsFactsRequest, SmsSendFactsRow>((db, items) =>
    smsSendFacts(db, items.map((a) => ({ accountId: a.principal.accountId, to: a.to, person: deps.personOf(a.to) }))),
  );

  return async function sendSms(principal: Principal, input: { to: string; body: string }, options: { messageId?: string; retaken?: boolean; cause?: Cause } = {}) {
    if (options.retaken && options.messageId) {
      // what the dead attempt queued is the answer (see queuedByEarlierAttempt)
      const earlier = (await queuedByEarlierAttempt(deps.eventStore, options.messageId)) as SmsQueued['data'] | null;
      if (earlier) return { queued: true as const, messageLogId: earlier.messageId, segments: earlier.segments, encoding: earlier.encoding };
    }
    const accountId = principal.accountId;
    const checked = checkSmsInput(input);
    if (!checked.ok) throw checked.error;
    const { to, segments, encoding } = checked;
    const day = utcDay(new Date()); // the day the slots are taken, and given back on
    const row = await facts.add({ principal, to });
    const apiKeyId = principal.kind === 'apiKey' ? principal.apiKeyId : null;
    const keyCap = principal.kind === 'apiKey' ? principal.dailyLimit : null;
    const given: SmsSendFacts = {
      to,
      accountFound: row.account_found,
      smsEnabled: row.sms_enabled,
      originationNumber: row.origination_number,
      sandbox: row.sandbox,
      sandboxDestination: row.sandbox_destination,
      suppressionReason: row.suppression_reason,
    };
    const reservation = await admitSend(admitSmsSend, given, deps.counters, {
      ...capScopes(day, accountId, apiKeyId, keyCap),
      keyCap,
      accountCap: row.daily_send_cap,
    }, refused);
    const messageId = options.messageId ?? createId(); // an idempotent request's, the same on every retry
    const data: SmsQueued['data'] = {
      messageId,
      accountId,
      apiKeyId,
      to,
      body: input.body,
      segments,
      encoding,
      originationNumber: row.origination_number!,
      provider: deps.provider,
      queuedAt: new Date().toISOString(),
    };
    // Two writes, the cap slot and the message stream: a failed append gives the slot back (a process
    // dying in between leaves it taken, which errs on the side of the cap), as for email.
    try {
      await execute(messageDecider, { kind: 'queueSms', data }, {
        eventStore: deps.eventStore,
        streamId: messageStream(messageId),
        commandId: `queue-${messageId}`,
        metadata: { actor: actorOf(principal), ...options.cause },
        history: [], // a brand-new stream: nothing to read first
      });
    } catch (err) {
      await reservation.release();
      throw err;
    }
    metrics.messageAccepted('sms');
    return { queued: true as const, messageLogId: messageId, segments, encoding };
  };
}
