import type { Decider } from '../decider.js';
import { conflict, notFound } from '../errors.js';
import { admitProviderEvent, type MessageSent, type ProviderEventOrigin } from '../provider-events/event-admission.js';
import type { EmailQueued, MessageEvent, ProviderOutcome, SmsQueued } from './events.js';
import type { Principal } from '../principal.js';
import { lateRefusal, type DueFacts } from './admission-recheck.js';
import type { RecordedEvent } from '../../ports/event-store.js';

export type MessageStatus = 'scheduled' | 'queued' | 'sent' | 'delivered' | 'bounced' | 'complained' | 'failed' | 'cancelled';

export interface MessageState extends MessageSent {
  status: MessageStatus | null;
  attempts: number;
  seenProviderEvents: Set<string>;
}

export type MessageCommand =
  | { kind: 'queueEmail'; data: EmailQueued['data'] }
  | { kind: 'queueSms'; data: SmsQueued['data'] }
  | { kind: 'providerAccepted'; providerMessageId: string; provider: string; attempt: number; now: string }
  | { kind: 'providerError'; attempt: number; error: string; retryAt: string | null; now: string }
  /**
   * withdraw a message the provider has not been asked to send yet; `sendClaimed`: a send worker has
   * taken the provider call (it may be calling the provider now)
   */
  | { kind: 'cancel'; now: string; sendClaimed?: boolean }
  /**
   * the suppression list and the account's verified senders looked at again as the provider call comes
   * due long after the send was admitted (rechecksAdmission)
   */
  | ({ kind: 'recheckAdmission'; now: string } & DueFacts)
  /** the provider will not be asked at all (what it would send was erased before its time): fail it so */
  | { kind: 'failUnsent'; error: string; now: string }
  /**
   * A provider event. `acceptedAs` is set when the provider named the message by our id (SES tag,
   * Postmark Metadata) along with its own: proof that it accepted the message. `origin`, set for
   * events from outside, is what the event claims about the send: it must agree with the message, or
   * nothing is recorded (admitProviderEvent). `formerId`: the id an earlier version recorded the same
   * report under (NormalizedProviderEvent), which counts as seen too.
   */
  | { kind: 'recordOutcome'; event?: ProviderOutcome; acceptedAs?: { providerMessageId: string; at: string }; origin?: ProviderEventOrigin; formerId?: string };

/**
 * Status moves forward only: (scheduled →) queued → sent → delivered, and bounced/complained win over
 * delivered (a complaint arrives after delivery). Opens and clicks never change the status: they are
 * counts. A scheduled message stays `scheduled` until the worker first tries the provider at its time:
 * accepted, it is `sent`; a retryable error makes it `queued` (retrying). `cancelled` is final: nothing
 * is sent after it.
 */
const RANK: Record<MessageStatus, number> = { scheduled: -1, queued: 0, failed: 1, sent: 1, delivered: 2, bounced: 3, complained: 4, cancelled: 5 };

function advance(current: MessageStatus | null, next: MessageStatus): MessageStatus {
  if (!current) return next;
  return RANK[next] > RANK[current] ? next : current;
}

const OUTCOME_STATUS: Partial<Record<ProviderOutcome['type'], MessageStatus>> = {
  Delivered: 'delivered',
  Complained: 'complained',
};

/** The status a message has after `event`, given its status before (null before it was queued). */
export function statusAfter(current: MessageStatus | null, event: { type: string; data: any }): MessageStatus | null {
  switch (event.type) {
    case 'EmailQueued':
      return advance(current, event.data.sendAt ? 'scheduled' : 'queued');
    case 'SmsQueued':
      return advance(current, 'queued');
    case 'ProviderAttemptFailed':
      return advance(current, 'queued');
    case 'MessageCancelled':
      return advance(current, 'cancelled');
    case 'ProviderAccepted':
      return advance(current, 'sent');
    case 'ProviderFailed':
      return advance(current, 'failed');
    case 'Bounced':
      return event.data.bounceType === 'hard' ? advance(current, 'bounced') : current;
    default: {
      const next = OUTCOME_STATUS[event.type as ProviderOutcome['type']];
      return next ? advance(current, next) : current;
    }
  }
}

/** Who may cancel a message: the key that sent it, or a dashboard user of its account. */
export function mayCancel(principal: Principal, state: MessageState): boolean {
  const q = state.queued;
  if (!q || q.accountId !== principal.accountId) return false;
  return principal.kind === 'user' || q.apiKeyId === principal.apiKeyId;
}

/** The refusal of a cancel that comes too late. */
export const HANDED_TO_PROVIDER = 'message has already been handed to the provider and cannot be cancelled';
/** The refusal of a cancel of a message that failed before any provider call (its recipient suppressed before its time). */
export const FAILED_UNSENT = 'message has already failed without being sent and cannot be cancelled';

const personOf = (event: RecordedEvent) => (typeof event.metadata.person === 'string' ? event.metadata.person : null);

export const messageDecider: Decider<MessageState, MessageCommand, MessageEvent> = {
  initialState: { queued: null, channel: null, status: null, providerMessageId: null, person: null, attempts: 0, seenProviderEvents: new Set() },

  evolve(state, event) {
    const e = event as unknown as MessageEvent;
    switch (e.type) {
      case 'EmailQueued':
        return { ...state, queued: e.data, channel: 'email', status: statusAfter(state.status, e), person: personOf(event) };
      case 'SmsQueued':
        return { ...state, queued: e.data, channel: 'sms', status: statusAfter(state.status, e), person: personOf(event) };
      case 'ProviderAccepted':
        return { ...state, status: statusAfter(state.status, e), providerMessageId: e.data.providerMessageId, attempts: e.data.attempt };
      case 'ProviderAttemptFailed':
        return { ...state, status: statusAfter(state.status, e), attempts: e.data.attempt };
      case 'MessageCancelled':
        return { ...state, status: statusAfter(state.status, e) };
      case 'ProviderFailed':
        return { ...state, status: statusAfter(state.status, e), attempts: e.data.attempt };
      default: {
        const seen = new Set(state.seenProviderEvents).add(e.data.providerEventId);
        return { ...state, seenProviderEvents: seen, status: statusAfter(state.status, e) };
      }
    }
  },

  decide(command, state) {
    switch (command.kind) {
      case 'queueEmail':
      case 'queueSms':
        // A retried send with the same id is a no-op; a different message under an existing id is not.
        if (state.queued) {
          if (state.queued.messageId === command.data.messageId) return [];
          throw conflict('message already exists');
        }
        return command.kind === 'queueEmail'
          ? [{ type: 'EmailQueued', data: command.data }]
          : [{ type: 'SmsQueued', data: command.data }];
      case 'providerAccepted':
        if (!state.queued) throw notFound('message not found');
        if (state.providerMessageId || state.status === 'failed') return [];
        return [
          {
            type: 'ProviderAccepted',
            data: { providerMessageId: command.providerMessageId, provider: command.provider, acceptedAt: command.now, attempt: command.attempt },
          },
        ];
      case 'cancel':
        if (!state.queued) throw notFound('message not found');
        // Cancelling twice answers the same: the message is cancelled, nothing more to record.
        if (state.status === 'cancelled') return [];
        // Nothing went out and nothing will, but it is `failed` (see its error), not cancelled.
        if (state.status === 'failed' && state.attempts === 0) throw conflict(FAILED_UNSENT);
        // Once the provider has been asked (accepted, failed, or an attempt that may have reached it),
        // withdrawing the message here would not withdraw it there.
        if (command.sendClaimed || state.providerMessageId || state.status === 'failed' || state.attempts > 0) {
          throw conflict(HANDED_TO_PROVIDER);
        }
        return [{ type: 'MessageCancelled', data: { cancelledAt: command.now } }];
      case 'providerError':
        if (!state.queued) throw notFound('message not found');
        if (state.providerMessageId || state.status === 'failed' || command.attempt <= state.attempts) return [];
        return command.retryAt
          ? [{ type: 'ProviderAttemptFailed', data: { attempt: command.attempt, error: command.error, nextAttemptAt: command.retryAt, failedAt: command.now } }]
          : [{ type: 'ProviderFailed', data: { attempt: command.attempt, error: command.error, failedAt: command.now } }];
      case 'recheckAdmission': {
        if (!state.queued) throw notFound('message not found');
        const refusal = lateRefusal(state.queued, command);
        return refusal ? failUnsent(state, refusal, command.now) : [];
      }
      case 'failUnsent':
        if (!state.queued) throw notFound('message not found');
        return failUnsent(state, command.error, command.now);
      case 'recordOutcome': {
        if (!state.queued) throw notFound('message not found');
        // Decided here, on the stream as appended to, and not only by the caller beforehand: the send
        // worker may record the provider's id for the message in between.
        if (command.origin && !admitProviderEvent(state, command.origin).ok) return [];
        const events: MessageEvent[] = [];
        // The provider's own report of a send whose answer we never recorded (a crash between its
        // answer and our append): recorded here, the send worker will not call the provider again.
        if (command.acceptedAs && needsProviderCall(state)) {
          const { providerMessageId, at } = command.acceptedAs;
          events.push({ type: 'ProviderAccepted', data: { providerMessageId, provider: state.queued.provider, acceptedAt: at, attempt: state.attempts + 1 } });
        }
        const seen = (id: string | undefined) => id !== undefined && state.seenProviderEvents.has(id);
        if (command.event && !seen(command.event.data.providerEventId) && !seen(command.formerId)) events.push(command.event);
        return events;
      }
    }
  },
};

/** Whether the provider should (still) be called for this message. */
export const needsProviderCall = (state: MessageState) =>
  Boolean(state.queued) && !state.providerMessageId && state.status !== 'failed' && state.status !== 'cancelled';

/**
 * A message failed without its provider being called (this time): failed, not cancelled, as
 * `cancelled` is the sender's own withdrawal. `attempt` stays the number of provider calls made (none
 * for a scheduled send at its time), so a cancel afterwards says it failed unsent.
 */
function failUnsent(state: MessageState, error: string, now: string): MessageEvent[] {
  if (!needsProviderCall(state)) return [];
  return [{ type: 'ProviderFailed', data: { attempt: state.attempts, error, failedAt: now } }];
}
