import { createId } from '../cuid.js';
import { isSuspectedBot } from '../domain/email/bot-detection.js';
import { openCounts } from '../domain/email/link-signature.js';
import { fold } from '../domain/decider.js';
import { messageStream, type EmailQueued } from '../domain/messages/events.js';
import { messageDecider } from '../domain/messages/message.js';
import type { EventStore } from '../ports/event-store.js';
import { correlationOf } from './caller.js';
import { execute } from './execute.js';
import type { SuppressionCommands } from './suppressions.js';
import type { Db } from '../adapters/db/knex.js';
import { contactOfPerson } from '../read-models/contacts.js';
import { sentToErasedPerson } from '../read-models/messages.js';

export interface Visit {
  method: string;
  userAgent?: string;
  ip?: string | null;
}

/** Opens, clicks and unsubscribes that arrive through the service's own links (/o/, /r/, /u/). */
export function createEngagementCommands(deps: { eventStore: EventStore; suppressions: SuppressionCommands; db: Db; linkSecret: string }) {
  async function message(messageId: string) {
    const events = await deps.eventStore.readStream(messageStream(messageId));
    const state = fold(messageDecider, events);
    if (state.channel !== 'email') return null;
    return {
      id: messageId,
      queued: state.queued as EmailQueued['data'],
      sentAt: events.find((e) => e.type === 'ProviderAccepted')?.recordedAt ?? null,
      // the recipient's keyed hash, which the sealing store keeps in clear beside the sealed address
      person: events[0]?.metadata.person as string | undefined,
      cause: correlationOf(events[0]),
    };
  }

  /**
   * Who an unsubscribe link stops mail to. Its message's address is gone once the recipient is erased
   * or the message is past the account's retention; the link must keep working all the same (mail
   * clients keep it for as long as the message): the contact of the same keyed hash still has the
   * address after a retention cutoff, and an erased person is suppressed by the hash alone. A contact
   * added with the address after the erasure has that hash too, but is someone the message was not
   * sent to: the link must not name them, nor tell a webhook it was their unsubscribe.
   */
  async function recipient(m: NonNullable<Awaited<ReturnType<typeof message>>>): Promise<{ email: string } | { person: string } | null> {
    if (m.queued.to) return { email: m.queued.to };
    if (!m.person) return null;
    if (await sentToErasedPerson(deps.db, m.id, m.person)) return { person: m.person };
    const contact = await contactOfPerson(deps.db, m.queued.accountId, m.person);
    return contact?.email ? { email: contact.email as string } : { person: m.person };
  }

  /** The message, whom its link unsubscribes, and what the pages show of them (no address for an erased person). */
  async function unsubscribing(messageId: string) {
    const m = await message(messageId);
    const who = m && (await recipient(m));
    if (!m || !who) return null;
    return { m, who, shown: { to: 'email' in who ? who.email : null, unsubscribeUrl: m.queued.unsubscribeUrl } };
  }

  async function record(messageId: string, kind: 'open' | 'click', visit: Visit, url?: string, signature?: string) {
    const m = await message(messageId);
    if (!m) return;
    // a click's link is checked before it redirects; an open's pixel here, and a forged one answers the same pixel
    if (kind === 'open' && !openCounts(deps.linkSecret, messageId, signature, m.queued.html)) return;
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
      metadata: { actor: 'recipient', ...m.cause },
    });
  }

  return {
    recordOpen: (messageId: string, visit: Visit, signature?: string) => record(messageId, 'open', visit, undefined, signature),
    recordClick: (messageId: string, visit: Visit, url: string) => record(messageId, 'click', visit, url),

    /** The message an unsubscribe token points at (for the confirmation page). */
    async unsubscribeTarget(messageId: string) {
      return (await unsubscribing(messageId))?.shown ?? null;
    },

    async unsubscribe(messageId: string, source: 'one_click' | 'form') {
      const target = await unsubscribing(messageId);
      if (!target) return null;
      await deps.suppressions.suppress({
        accountId: target.m.queued.accountId,
        ...target.who,
        reason: 'unsubscribed',
        source,
        messageId,
        campaignId: target.m.queued.campaignId,
        actor: 'recipient',
      });
      return target.shown;
    },
  };
}
export type EngagementCommands = ReturnType<typeof createEngagementCommands>;
