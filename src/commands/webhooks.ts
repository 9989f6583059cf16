import { randomBytes } from 'node:crypto';
import { createId } from '../cuid.js';
import type { Db } from '../adapters/db/knex.js';
import { signingSecret, webhookStream, webhookSubscriptionDecider, WEBHOOK_EVENTS, type WebhookFields } from '../domain/webhooks/subscription.js';
import { notFound } from '../domain/errors.js';
import type { EventStore } from '../ports/event-store.js';
import { execute } from './execute.js';
import { callerMetadata, type Caller } from './caller.js';
import type { WaitForProjection } from './read-your-writes.js';
import { SIGNING_SECRET_COLUMNS, signingSecretsOf, webhookRow, webhooksOf } from '../read-models/webhooks.js';

// whsec_ + 32 random bytes; signatures use these exact UTF-8 characters as the HMAC key (docs/webhooks.md).
const newSecret = () => `whsec_${randomBytes(32).toString('base64url')}`;

/**
 * The secret signing now, and, while a rotation waits for its time, the one that signs from then on
 * (`nextSecret`, `nextSecretAt`): a receiver accepts both until the switch.
 */
function secretsView(row: Record<string, any>, now = new Date()) {
  const secrets = signingSecretsOf(row);
  const secret = signingSecret(secrets, now);
  return { secret, ...(secrets.next !== null && secrets.next !== secret ? { nextSecret: secrets.next, nextSecretAt: secrets.nextAt } : {}) };
}

export function webhookView(row: Record<string, any>) {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    ...secretsView(row),
    createdAt: new Date(row.created_at).toISOString(),
  };
}

/**
 * Webhook subscriptions. `checkTarget` refuses endpoints that resolve to private addresses (SSRF guard)
 * unless the deployment allows them.
 */
export function createWebhookCommands(deps: { eventStore: EventStore; db: Db; waitFor: WaitForProjection; checkTarget(url: string): Promise<void> }) {
  async function get(accountId: string, id: string) {
    const row = await webhookRow(deps.db, accountId, id);
    if (!row) throw notFound(`webhook ${id} not found`);
    return webhookView(row);
  }
  async function run(id: string, caller: Caller, command: Parameters<typeof webhookSubscriptionDecider.decide>[0]) {
    const result = await execute(webhookSubscriptionDecider, command, { eventStore: deps.eventStore, streamId: webhookStream(id), metadata: callerMetadata(caller) });
    await deps.waitFor('webhooks', result.position);
    return result;
  }
  return {
    get,
    async list(accountId: string) {
      return (await webhooksOf(deps.db, accountId)).map(webhookView);
    },
    async create(accountId: string, caller: Caller, input: { url: string; events?: WebhookFields['events'] }) {
      await deps.checkTarget(input.url);
      const id = createId();
      const secret = newSecret();
      const fields = { url: input.url, events: input.events ? [...new Set(input.events)] : [...WEBHOOK_EVENTS] };
      await run(id, caller, { kind: 'subscribe', id, accountId, fields, secret, now: new Date().toISOString() });
      return get(accountId, id);
    },
    async change(accountId: string, caller: Caller, id: string, input: Partial<WebhookFields>) {
      if (input.url) await deps.checkTarget(input.url);
      if (input.events) input = { ...input, events: [...new Set(input.events)] };
      await run(id, caller, { kind: 'change', id, accountId, fields: input, now: new Date().toISOString() });
      return get(accountId, id);
    },
    /**
     * The signing secret, for an admin who asks to see it: this reading is recorded (the audit trail
     * shows who read it and from where; the event holds no secret). The dashboard reveals it this way;
     * the subscription views still carry it, as the API has always answered admins.
     */
    async revealSecret(accountId: string, caller: Caller, id: string) {
      await execute(webhookSubscriptionDecider, { kind: 'revealSecret', id, accountId, now: new Date().toISOString() }, {
        eventStore: deps.eventStore,
        streamId: webhookStream(id),
        metadata: callerMetadata(caller),
      });
      const row = await webhookRow(deps.db, accountId, id, SIGNING_SECRET_COLUMNS);
      if (!row) throw notFound(`webhook ${id} not found`);
      return { id, ...secretsView(row) };
    },
    /**
     * A new signing secret, for a secret that leaked or a routine change. It signs from `activeAt`
     * (now when absent): set a time ahead to let the receiver accept both secrets before the switch.
     * Recorded in the audit trail as `webhook.secret_rotated`, without the secret.
     */
    async rotateSecret(accountId: string, caller: Caller, id: string, activeAt?: string) {
      const secret = newSecret();
      const { events } = await run(id, caller, { kind: 'rotateSecret', id, accountId, secret, activeAt, now: new Date().toISOString() });
      const rotated = events[0].data as { nextAt: string | null; rotatedAt: string };
      return { id, newSecret: secret, activeAt: rotated.nextAt ?? rotated.rotatedAt };
    },
    async remove(accountId: string, caller: Caller, id: string) {
      await run(id, caller, { kind: 'remove', id, accountId, now: new Date().toISOString() });
      return { id, deleted: true };
    },
  };
}
export type WebhookCommands = ReturnType<typeof createWebhookCommands>;
