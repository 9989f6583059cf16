import type { Db } from '../adapters/db/knex.js';
import type { WebhookSender } from '../adapters/webhooks/http-sender.js';
import { classifyAttempt } from '../domain/webhooks/classify-response.js';
import { DELIVER_WEBHOOK_JOB, deliveryDecider, deliveryEffectId, deliveryStream } from '../domain/webhooks/delivery.js';
import { notFound } from '../domain/errors.js';
import { enqueueSideEffects, recordSideEffects } from '../adapters/db/side-effects.js';
import { signedRequest } from '../adapters/webhooks/signed-request.js';
import type { EventStore } from '../ports/event-store.js';
import type { JobQueue } from '../ports/job-queue.js';
import { execute } from './execute.js';
import { callerMetadata, type Caller } from './caller.js';
import type { WaitForProjection } from './read-your-writes.js';
import { deliveriesPage, deliveryRow } from '../read-models/webhook-deliveries.js';
import { decodePageCursor, pageOf } from './page-cursor.js';
import { SIGNING_SECRET_COLUMNS, signingSecretsOf, webhookRow } from '../read-models/webhooks.js';
import { signingSecret } from '../domain/webhooks/subscription.js';

const iso = (v: unknown) => (v ? new Date(v as string).toISOString() : null);

export function deliveryView(row: Record<string, any>) {
  return {
    id: row.id,
    event: row.event,
    eventId: row.event_id ?? null,
    status: row.status,
    attempts: row.attempts,
    lastResponseStatus: row.last_response_status,
    lastError: row.last_error,
    nextAttemptAt: iso(row.next_attempt_at),
    createdAt: iso(row.created_at),
  };
}

export function createWebhookDeliveryCommands(deps: { eventStore: EventStore; db: Db; queue: JobQueue; sender: WebhookSender; waitFor: WaitForProjection }) {
  return {
    /** A page of the endpoint's deliveries, newest first, and the cursor of the next (null: none). */
    async list(accountId: string, subscriptionId: string, opts: { status?: string; cursor?: string; limit: number }) {
      if (!(await webhookRow(deps.db, accountId, subscriptionId, ['id']))) throw notFound(`webhook ${subscriptionId} not found`);
      const rows = await deliveriesPage(deps.db, accountId, subscriptionId, { status: opts.status, after: opts.cursor ? decodePageCursor(opts.cursor) : undefined, limit: opts.limit + 1 });
      const { page, nextCursor } = pageOf(rows, opts.limit);
      return { items: page.map(deliveryView), nextCursor };
    },

    /** A failed delivery gets a new series of attempts. */
    async retry(accountId: string, caller: Caller, deliveryId: string) {
      // only what the log lists can be retried: another account's, one purged after 14 days, or one of a
      // removed endpoint is not found
      const listed = await deliveryRow(deps.db, accountId, deliveryId, ['subscription_id']);
      if (!listed) throw notFound(`delivery ${deliveryId} not found`);
      const subscriptionRemoved = !(await webhookRow(deps.db, accountId, listed.subscription_id, ['id']));
      const result = await execute(deliveryDecider, { kind: 'retry', accountId, subscriptionRemoved, by: caller.actor, now: new Date().toISOString() }, {
        eventStore: deps.eventStore,
        streamId: deliveryStream(deliveryId),
        metadata: callerMetadata(caller),
      });
      // The webhook-retries process manager makes the same effect from the event, due a little later,
      // for a process that stops before the next lines; recorded here, it is due at once, and queued
      // only once the answer below is read.
      const series = result.state.series;
      const runAfter = new Date();
      const effect = {
        id: deliveryEffectId(deliveryId, series),
        kind: DELIVER_WEBHOOK_JOB,
        payload: { deliveryId, series },
        runAfter,
        orderingKey: result.state.scheduled!.orderingKey,
      };
      await recordSideEffects(deps.db, [effect]);
      await deps.waitFor('webhook_deliveries', result.position);
      const row = await deliveryRow(deps.db, accountId, deliveryId);
      // The answer is the delivery as the retry left it: read before the job is queued, which a fast
      // receiver would otherwise have answered already.
      await enqueueSideEffects(deps.queue, [effect]);
      // a failed delivery already purged from the read model is still on its stream, and is retried
      if (!row) throw notFound(`delivery ${deliveryId} not found`);
      return deliveryView(row);
    },

    /**
     * One signed `webhook.test` POST now, its result returned (the dashboard's Test button). The attempt
     * is recorded on a delivery stream of its own, so it shows in the endpoint's deliveries log like any
     * other. It is a single attempt: a failed test ends `failed` at once, with no automatic retries (the
     * person pressing the button is waiting for this answer, not for one in a minute); the log's manual
     * retry still works on it.
     */
    async test(accountId: string, caller: Caller, subscriptionId: string) {
      const sub = await webhookRow(deps.db, accountId, subscriptionId, ['url', ...SIGNING_SECRET_COLUMNS]);
      if (!sub) throw notFound(`webhook ${subscriptionId} not found`);
      const now = new Date();
      const deliveryId = crypto.randomUUID();
      const body = JSON.stringify({ id: deliveryId, event: 'webhook.test', occurredAt: now.toISOString(), accountId, data: {} });
      const result = await deps.sender.post({ url: sub.url, ...signedRequest(signingSecret(signingSecretsOf(sub), now), 'webhook.test', body, 1, now) });
      const delivered = classifyAttempt(result) === 'delivered';
      const error = result.networkError ?? (result.timedOut ? 'timed out' : delivered ? undefined : `HTTP ${result.status}`);
      const recorded = await execute(
        deliveryDecider,
        {
          kind: 'recordAttempt',
          outcome: delivered ? 'delivered' : 'failed',
          result: { attempt: 1, responseStatus: result.status ?? null, error: error ?? null, at: new Date().toISOString() },
          nextAttemptAt: null,
          schedule: {
            deliveryId,
            accountId,
            subscriptionId,
            event: 'webhook.test',
            body,
            // its own key: a test neither waits for nor holds up the endpoint's other deliveries
            orderingKey: `${subscriptionId}:test:${deliveryId}`,
            scheduledAt: now.toISOString(),
          },
        },
        { eventStore: deps.eventStore, streamId: deliveryStream(deliveryId), metadata: callerMetadata(caller) },
      );
      // the log the dashboard reloads after the answer lists this test already
      await deps.waitFor('webhook_deliveries', recorded.position);
      return { delivered, responseStatus: result.status ?? null, ...(error ? { error } : {}) };
    },
  };
}
export type WebhookDeliveryCommands = ReturnType<typeof createWebhookDeliveryCommands>;
