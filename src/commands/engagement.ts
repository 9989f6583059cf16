import { createId } from '../cuid.js';
import { isSuspectedBot } from '../domain/email/bot-detection.js';
import { fold } from '../domain/decider.js';
import { messageStream, type EmailQueued } from '../domain/messages/events.js';
import { messageDecider } from '../domain/messages/message.js';
import type { EventStore } from '../ports/event-store.js';
import { execute } from './execute.js';
import type { SuppressionCommands } from './suppressions.js';

export interface Visit {
  method: string;
  userAgent?: string;
  ip?: string | null;
}

/** Opens, clicks and unsubscribes that arrive through the service's own links (/o/, /r/, /u/). */
export function createEngagementCommands(deps: { eventStore: EventStore; suppressions: SuppressionCommands }) {
  async function message(messageId: string) {
    const events = await deps.eventStore.readStream(messageStream(messageId));
    const state = fold(messageDecider, events);
    return state.channel === 'email' ? { state, queued: state.queued as EmailQueued['data'], sentAt: events.find((e) => e.type === 'ProviderAccepted')?.recordedAt ?? null } : null;
  }

  async function record(messageId: string, kind: 'open' | 'click', visit: Visit, url?: string) {
    const m = await message(messageId);
    if (!m) return;
    const now = new Date();
    const base = {
      providerEventId: `service:${createId()}`,
      occurredAt: now.toISOString(),
      recipient: m.queued.to,
      userAgent: visit.userAgent,
      ip: visit.ip ?? undefined,
      suspectedBot: isSuspectedBot({ method: visit.method, userAgent: visit.userAgent, sentAt: m.sentAt, now, kind }),
      source: 'service' as const,
    };
    const event = kind === 'open' ? { type: 'Opened' as const, data: base } : { type: 'Clicked' as const, data: { ...base, url: url! } };
    await execute(messageDecider, { kind: 'recordOutcome', event }, {
      eventStore: deps.eventStore,
      streamId: messageStream(messageId),
      metadata: { actor: 'recipient' },
    });
  }

  return {
    recordOpen: (messageId: string, visit: Visit) => record(messageId, 'open', visit),
    recordClick: (messageId: string, visit: Visit, url: string) => record(messageId, 'click', visit, url),

    /** The message an unsubscribe token points at (for the confirmation page). */
    async unsubscribeTarget(messageId: string) {
      const m = await message(messageId);
      return m ? { to: m.queued.to, unsubscribeUrl: m.queued.unsubscribeUrl } : null;
    },

    async unsubscribe(messageId: string, source: 'one_click' | 'form') {
      const m = await message(messageId);
      if (!m) return null;
      await deps.suppressions.suppress({
        accountId: m.queued.accountId,
        email: m.queued.to,
        reason: 'unsubscribed',
        source,
        messageId,
        campaignId: m.queued.campaignId,
        actor: 'recipient',
      });
      return { to: m.queued.to, unsubscribeUrl: m.queued.unsubscribeUrl };
    },
  };
}
export type EngagementCommands = ReturnType<typeof createEngagementCommands>;
