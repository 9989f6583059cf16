import type { Logger } from 'pino';
import type { Db } from '../adapters/db/knex.js';
import type { WebhookSender } from '../adapters/webhooks/http-sender.js';
import { NO_METRICS, type Metrics } from '../ports/metrics.js';
import { execute } from '../commands/execute.js';
import { createGroupCommit } from '../group-commit.js';
import { fold } from '../domain/decider.js';
import { classifyAttempt, nextAttemptDelay, parseRetryAfter } from '../domain/webhooks/classify-response.js';
import { deliveryDecider, deliveryStream, type DeliveryCommand, type DeliveryScheduled, type DeliveryState } from '../domain/webhooks/delivery.js';
import { signedRequest } from '../adapters/webhooks/signed-request.js';
import type { EventStore } from '../ports/event-store.js';
import type { Job, JobQueue } from '../ports/job-queue.js';
import {
  createSideEffectLeases,
  releaseSideEffect,
  rescheduleSideEffect,
  type SideEffectJob,
} from '../adapters/db/side-effects.js';
import { deliveryTargets } from '../read-models/webhooks.js';
import { signingSecret, type SigningSecrets } from '../domain/webhooks/subscription.js';

export interface DeliverWebhookJob extends SideEffectJob {
  deliveryId: string;
  series: number;
  schedule?: DeliveryScheduled['data'];
}

/** How long a delivery waits before looking again when an earlier one for the same contact is unfinished. */
const PREDECESSOR_WAIT_MS = 2_000;

/**
 * One attempt of one delivery: sign, POST, classify (the retry table of docs/webhooks.md), record on the delivery
 * stream, and schedule the next attempt ourselves.
 */
export function createDeliverWebhookHandler(deps: {
  db: Db;
  eventStore: EventStore;
  queue: JobQueue;
  sender: WebhookSender;
  retryDelaysMs: number[];
  /** the side-effect lease (renewed while a delivery runs) */
  leaseMs?: number;
  logger?: Logger;
  /** attempts by outcome */
  metrics?: Metrics;
}) {
  const metrics = deps.metrics ?? NO_METRICS;
  const leases = createSideEffectLeases(deps.db, deps.queue, { leaseMs: deps.leaseMs, logger: deps.logger });
  // One round trip for the attempts running side by side: for each, whether an earlier delivery to the
  // same endpoint and contact is unfinished, and where to send.
  const targets = createGroupCommit<{ effectId: string; subscriptionId: string }, { blocked: boolean; subscription?: { url: string; secrets: SigningSecrets } }>(
    (items) => deliveryTargets(deps.db, items),
  );
  return async function handle(job: Job<DeliverWebhookJob>): Promise<void> {
    if (!(await leases.claim(job.data))) return;
    try {
      await attemptDelivery(job.data);
    } catch (err) {
      await releaseSideEffect(deps.db, job.data.sideEffectId).catch(() => undefined);
      throw err;
    } finally {
      leases.letGo(job.data.sideEffectId);
    }
  };

  async function attemptDelivery(data: DeliverWebhookJob): Promise<void> {
    const { deliveryId, sideEffectId, schedule } = data;
    const streamId = deliveryStream(deliveryId);
    const history = await deps.eventStore.readStream(streamId);
    const recorded = fold(deliveryDecider, history);
    // A first attempt records its schedule together with its outcome (one append instead of two); a
    // re-run job finds the schedule already recorded.
    const unrecorded = !recorded.scheduled && schedule ? schedule : undefined;
    const state: DeliveryState = unrecorded ? { ...recorded, scheduled: unrecorded, status: 'retrying' } : recorded;
    if (!state.scheduled || state.status !== 'retrying' || state.series !== data.series) {
      await leases.markDone(sideEffectId);
      return;
    }
    const { blocked, subscription } = await targets.add({ effectId: sideEffectId, subscriptionId: state.scheduled.subscriptionId });
    if (blocked) {
      // listed as retrying while it waits for the earlier delivery to the same endpoint and contact
      if (unrecorded) await record({ kind: 'schedule', data: unrecorded }, 'schedule');
      await rescheduleSideEffect(deps.db, deps.queue, sideEffectId, new Date(Date.now() + PREDECESSOR_WAIT_MS));
      return;
    }
    const attempt = state.attempts + 1;
    const now = new Date();
    let outcome: 'delivered' | 'retry' | 'failed';
    let responseStatus: number | null = null;
    let error: string | null = null;
    let retryAfterMs: number | null = null;
    if (!subscription) {
      outcome = 'failed';
      error = 'the subscription was removed';
    } else if (state.scheduled.body == null) {
      // sealed under a person's key that was destroyed since: there is nothing left to send
      outcome = 'failed';
      error = 'the person it is about was erased';
    } else {
      const request = signedRequest(signingSecret(subscription.secrets, now), state.scheduled.event, state.scheduled.body, attempt, now);
      const result = await deps.sender.post({ url: subscription.url, ...request });
      responseStatus = result.status ?? null;
      error = result.networkError ?? (result.timedOut ? 'timed out' : result.status && (result.status < 200 || result.status >= 300) ? `HTTP ${result.status}` : null);
      outcome = classifyAttempt(result);
      retryAfterMs = result.retryAfter ? parseRetryAfter(result.retryAfter, now) : null;
    }
    let delay = outcome === 'retry' ? nextAttemptDelay(attempt, deps.retryDelaysMs) : null;
    if (delay !== null && retryAfterMs !== null) delay = Math.max(delay, retryAfterMs);
    const finalOutcome = outcome === 'retry' && delay === null ? 'failed' : outcome;
    // counted from the answer (or the timeout), not from the attempt's start: a receiver that timed out
    // after 15 s would otherwise be tried again 45 s later where a minute was promised
    const nextAttemptAt = delay === null ? null : new Date(Date.now() + delay);
    metrics.webhookAttempt(finalOutcome);

    const command: DeliveryCommand = {
      kind: 'recordAttempt',
      outcome: finalOutcome,
      result: { attempt, responseStatus, error, at: now.toISOString() },
      nextAttemptAt: nextAttemptAt?.toISOString() ?? null,
      ...(unrecorded ? { schedule: unrecorded } : {}),
    };
    await record(command, `series-${state.series}-attempt-${attempt}`, history);
    if (nextAttemptAt) {
      await rescheduleSideEffect(deps.db, deps.queue, sideEffectId, nextAttemptAt);
    } else {
      await leases.markDone(sideEffectId);
    }

    /**
     * Appends the decision on the delivery stream, deciding on the history already read when there is
     * one; event ids derive from `commandId`, so a re-run appends nothing twice.
     */
    async function record(cmd: DeliveryCommand, commandId: string, known?: typeof history): Promise<void> {
      await execute(deliveryDecider, cmd, { eventStore: deps.eventStore, streamId, commandId, metadata: { actor: 'system:webhooks' }, history: known });
    }
  }
}
