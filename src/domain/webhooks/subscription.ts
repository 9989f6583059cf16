import type { Decider } from '../decider.js';
import { invalidField, notFound } from '../errors.js';

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
  | { type: 'WebhookSecretRevealed'; data: { id: string; accountId: string; revealedAt: string } }
  /** a new signing secret, signing from `nextAt` (or at once: `next` null, `secret` the new one); the signing state after it, whole */
  | { type: 'WebhookSecretRotated'; data: SigningSecrets & { id: string; accountId: string; rotatedAt: string } };

/**
 * What signs an endpoint's deliveries: `secret`, until `nextAt` if a rotation is pending, then `next`.
 * A rotation that takes effect later lets the receiver accept both secrets before the switch, since a
 * delivery carries one signature.
 */
export interface SigningSecrets {
  secret: string;
  next: string | null;
  nextAt: string | null;
}

/** How far ahead a rotation may be set to take effect: long enough to deploy a receiver, short enough to be remembered. */
export const MAX_ROTATION_DELAY_MS = 7 * 86_400_000;

/** The secret that signs at `at`. */
export function signingSecret(s: SigningSecrets, at: Date): string {
  return s.next !== null && s.nextAt !== null && Date.parse(s.nextAt) <= at.getTime() ? s.next : s.secret;
}

export type WebhookSubscriptionCommand =
  | { kind: 'subscribe'; id: string; accountId: string; fields: WebhookFields; secret: string; now: string }
  | { kind: 'change'; id: string; accountId: string; fields: Partial<WebhookFields>; now: string }
  | { kind: 'remove'; id: string; accountId: string; now: string }
  | { kind: 'revealSecret'; id: string; accountId: string; now: string }
  /** `secret`: the new one, made by the caller; it signs from `activeAt` (now when absent or past) */
  | { kind: 'rotateSecret'; id: string; accountId: string; secret: string; activeAt?: string; now: string };

export interface WebhookSubscriptionState {
  subscription: (WebhookFields & SigningSecrets & { id: string; accountId: string; createdAt: string }) | null;
}

export const WEBHOOK_STREAM_PREFIX = 'webhook-';
export const webhookStream = (id: string) => `${WEBHOOK_STREAM_PREFIX}${id}`;

export const webhookSubscriptionDecider: Decider<WebhookSubscriptionState, WebhookSubscriptionCommand, WebhookSubscriptionEvent> = {
  initialState: { subscription: null },
  evolve(state, event) {
    // an endpoint subscribed has no rotation pending
    if (event.type === 'WebhookSubscribed') return { subscription: { next: null, nextAt: null, ...event.data } };
    if (event.type === 'WebhookSecretRotated' && state.subscription) {
      const { secret, next, nextAt } = event.data;
      return { subscription: { ...state.subscription, secret, next, nextAt } };
    }
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
    if (command.kind === 'rotateSecret') {
      const now = new Date(command.now);
      const activeAt = command.activeAt === undefined ? now : new Date(command.activeAt);
      if (activeAt.getTime() - now.getTime() > MAX_ROTATION_DELAY_MS) throw invalidField('activeAt', 'at most 7 days ahead');
      // a rotation still pending is replaced: only the secret signing now, and the newest, stay valid
      const secret = signingSecret(state.subscription, now);
      const signing: SigningSecrets = activeAt <= now ? { secret: command.secret, next: null, nextAt: null } : { secret, next: command.secret, nextAt: activeAt.toISOString() };
      return [{ type: 'WebhookSecretRotated', data: { ...signing, id: command.id, accountId: command.accountId, rotatedAt: command.now } }];
    }
    return [{ type: 'WebhookChanged', data: { ...command.fields, id: command.id, accountId: command.accountId, changedAt: command.now } }];
  },
};
