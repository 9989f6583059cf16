import type { RecordedEvent } from '../../ports/event-store.js';
import type { Decider } from '../decider.js';
import { badRequest, conflict, notFound } from '../errors.js';

/**
 * One webhook delivery (one event to one subscription), stream `delivery-<id>`. A delivery runs in
 * series of up to 6 attempts; a manual retry of a failed delivery starts a new series.
 */
export type DeliveryStatus = 'retrying' | 'delivered' | 'failed';

export interface DeliveryScheduled {
  type: 'WebhookDeliveryScheduled';
  data: {
    deliveryId: string;
    accountId: string;
    subscriptionId: string;
    event: string;
    /** the exact JSON body sent on every attempt (only the signature headers change) */
    body: string;
    /** the body's `id`, which receivers deduplicate on, kept in clear (it names no one): the deliveries log shows it */
    eventId?: string;
    orderingKey: string;
    scheduledAt: string;
  };
}

/** A delivery's event id: recorded beside its body, or (deliveries scheduled before it was) read from the body. */
export function deliveryEventId(scheduled: { eventId?: string; body: string | null }): string | null {
  if (scheduled.eventId) return scheduled.eventId;
  try {
    const id = scheduled.body ? JSON.parse(scheduled.body)?.id : null;
    return typeof id === 'string' ? id : null;
  } catch {
    return null;
  }
}
export interface AttemptResult {
  attempt: number;
  series: number;
  responseStatus: number | null;
  error: string | null;
  at: string;
}
export type DeliveryEvent =
  | DeliveryScheduled
  | { type: 'WebhookAttemptFailed'; data: AttemptResult & { nextAttemptAt: string } }
  | { type: 'WebhookDelivered'; data: AttemptResult }
  | { type: 'WebhookDeliveryFailed'; data: AttemptResult }
    /** `deliveryId` and `accountId` name what the audit trail lists; retries recorded before they were added lack them */
  | { type: 'WebhookRetryRequested'; data: { series: number; by: string; at: string; deliveryId?: string; accountId?: string } };

export type DeliveryCommand =
  | { kind: 'schedule'; data: DeliveryScheduled['data'] }
  | {
      kind: 'recordAttempt';
      outcome: 'delivered' | 'retry' | 'failed';
      result: Omit<AttemptResult, 'series'>;
      nextAttemptAt: string | null;
      /** a first attempt made before the delivery was recorded: the schedule is recorded with its outcome, in one append */
      schedule?: DeliveryScheduled['data'];
    }
  /** `subscriptionRemoved`: the endpoint it was for has been deleted since (its deliveries went with it) */
  | { kind: 'retry'; accountId: string; subscriptionRemoved: boolean; by: string; now: string };

export interface DeliveryState {
  scheduled: DeliveryScheduled['data'] | null;
  status: DeliveryStatus | null;
  series: number;
  /** attempts made in the current series */
  attempts: number;
}

export const deliveryStream = (id: string) => `delivery-${id}`;

/** The job that makes a delivery's attempts. */
export const DELIVER_WEBHOOK_JOB = 'webhook.deliver';

/** The side effect that makes a delivery's attempts of one series (1: the first; a manual retry starts the next). */
export const deliveryEffectId = (deliveryId: string, series: number) => `webhook:${deliveryId}:${series}`;
export const DELIVERY_STREAM_PREFIX = 'delivery-';

export const deliveryDecider: Decider<DeliveryState, DeliveryCommand, DeliveryEvent> = {
  initialState: { scheduled: null, status: null, series: 1, attempts: 0 },
  evolve(state, event) {
    switch (event.type) {
      case 'WebhookDeliveryScheduled':
        return { ...state, scheduled: event.data, status: 'retrying' };
      case 'WebhookAttemptFailed':
        return { ...state, attempts: event.data.attempt, status: 'retrying' };
      case 'WebhookDelivered':
        return { ...state, attempts: event.data.attempt, status: 'delivered' };
      case 'WebhookDeliveryFailed':
        return { ...state, attempts: event.data.attempt, status: 'failed' };
      case 'WebhookRetryRequested':
        return { ...state, series: event.data.series, attempts: 0, status: 'retrying' };
      default:
        return state;
    }
  },
  decide(command, state) {
    if (command.kind === 'schedule') return state.scheduled ? [] : [{ type: 'WebhookDeliveryScheduled', data: command.data }];
    if (command.kind === 'recordAttempt' && !state.scheduled && command.schedule) {
      const scheduled: DeliveryScheduled = { type: 'WebhookDeliveryScheduled', data: command.schedule };
      const { schedule: _, ...rest } = command;
      return [scheduled, ...deliveryDecider.decide(rest, deliveryDecider.evolve(state, { type: scheduled.type, data: scheduled.data } as RecordedEvent))];
    }
    if (!state.scheduled) throw notFound('delivery not found');
    if (command.kind === 'retry') {
      if (state.scheduled.accountId !== command.accountId || command.subscriptionRemoved) throw notFound(`delivery ${state.scheduled.deliveryId} not found`);
      // sealed under a person's key that was destroyed since: no attempt could send anything
      if (state.scheduled.body == null) throw conflict('the person this delivery is about was erased: it cannot be sent again');
      if (state.status !== 'failed') throw badRequest(`only a failed delivery can be retried (this one is ${state.status})`);
      return [
        {
          type: 'WebhookRetryRequested',
          data: { series: state.series + 1, by: command.by, at: command.now, deliveryId: state.scheduled.deliveryId, accountId: command.accountId },
        },
      ];
    }
    // A finished delivery, or an attempt already recorded (a re-run job), changes nothing.
    if (state.status !== 'retrying' || command.result.attempt <= state.attempts) return [];
    const data = { ...command.result, series: state.series };
    if (command.outcome === 'delivered') return [{ type: 'WebhookDelivered', data }];
    if (command.outcome === 'retry' && command.nextAttemptAt) return [{ type: 'WebhookAttemptFailed', data: { ...data, nextAttemptAt: command.nextAttemptAt } }];
    return [{ type: 'WebhookDeliveryFailed', data }];
  },
};

/**
 * A delivery job's data with the body nulled, when it is about the person and still has one: its
 * ordering key ends with one of `names` (the person's keyed hash; before sealing, their address).
 */
export function withoutBodyOf(data: unknown, names: readonly string[]): unknown | undefined {
  const schedule = (data as { schedule?: { orderingKey?: string; body?: unknown } } | null)?.schedule;
  const key = schedule?.orderingKey;
  if (!key || !names.some((name) => key.endsWith(`:${name}`)) || schedule.body == null) return undefined;
  return { ...(data as object), schedule: { ...schedule, body: null } };
}
