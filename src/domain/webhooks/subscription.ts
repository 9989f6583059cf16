import type { Decider } from '../decider.js';
import { notFound } from '../errors.js';

export const WEBHOOK_EVENTS = ['contact.unsubscribed', 'contact.bounced', 'contact.complained', 'contact.suppressed'] as const;
export type WebhookEventName = (typeof WEBHOOK_EVENTS)[number];

export interface WebhookFields {
  url: string;
  events: WebhookEventName[];
}

export type WebhookSubscriptionEvent =
  | { type: 'WebhookSubscribed'; data: WebhookFields & { id: string; accountId: string; secret: string; createdAt: string } }
  | { type: 'WebhookChanged'; data: Partial<WebhookFields> & { id: string; accountId: string; changedAt: string } }
  | { type: 'WebhookRemoved'; data: { id: string; accountId: string; removedAt: string } }
  /** an admin read the signing secret: recorded for the audit trail (who, from where), never with the secret */
  | { type: 'WebhookSecretRevealed'; data: { id: string; accountId: string; revealedAt: string } };

export type WebhookSubscriptionCommand =
  | { kind: 'subscribe'; id: string; accountId: string; fields: WebhookFields; secret: string; now: string }
  | { kind: 'change'; id: string; accountId: string; fields: Partial<WebhookFields>; now: string }
  | { kind: 'remove'; id: string; accountId: string; now: string }
  | { kind: 'revealSecret'; id: string; accountId: string; now: string };

export interface WebhookSubscriptionState {
  subscription: (WebhookFields & { id: string; accountId: string; secret: string; createdAt: string }) | null;
}

export const WEBHOOK_STREAM_PREFIX = 'webhook-';
export const webhookStream = (id: string) => `${WEBHOOK_STREAM_PREFIX}${id}`;

export const webhookSubscriptionDecider: Decider<WebhookSubscriptionState, WebhookSubscriptionCommand, WebhookSubscriptionEvent> = {
  initialState: { subscription: null },
  evolve(state, event) {
    if (event.type === 'WebhookSubscribed') return { subscription: event.data };
    if (event.type === 'WebhookChanged' && state.subscription) {
      const { url, events } = event.data;
      return { subscription: { ...state.subscription, ...(url ? { url } : {}), ...(events ? { events } : {}) } };
    }
    if (event.type === 'WebhookRemoved') return { subscription: null };
    return state;
  },
  decide(command, state) {
    if (command.kind === 'subscribe') {
      if (state.subscription) return [];
      return [{ type: 'WebhookSubscribed', data: { ...command.fields, id: command.id, accountId: command.accountId, secret: command.secret, createdAt: command.now } }];
    }
    if (!state.subscription || state.subscription.accountId !== command.accountId) throw notFound('webhook not found');
    if (command.kind === 'remove') return [{ type: 'WebhookRemoved', data: { id: command.id, accountId: command.accountId, removedAt: command.now } }];
    if (command.kind === 'revealSecret') return [{ type: 'WebhookSecretRevealed', data: { id: command.id, accountId: command.accountId, revealedAt: command.now } }];
    return [{ type: 'WebhookChanged', data: { ...command.fields, id: command.id, accountId: command.accountId, changedAt: command.now } }];
  },
};
