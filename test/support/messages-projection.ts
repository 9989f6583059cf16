import type { DomainEvent } from '../../src/domain/decider.js';
import type { EmailQueued, SmsQueued } from '../../src/domain/messages/events.js';
import type { Projection } from '../../src/projections/projection.js';
import type { RecordedEvent } from '../../src/ports/event-store.js';
import { createTestDatabase } from './db.js';

/**
 * given-events/then-rows for the messages projection: tables under a `_spec` suffix in a fresh
 * database; each `given` call is one batch through `handle`, revisions counted per stream and every
 * event recorded one second after the previous one (so `updated_at` shows which event came last).
 */
export async function messagesProjectionSpec(projection: Projection) {
  const database = await createTestDatabase();
  const t = (base: string) => `${base}_spec`;
  await database.db.transaction((trx) => projection.setup(trx, t));
  let position = 0n;
  const revisions = new Map<string, number>();
  return {
    db: database.db,
    async given(...batches: [messageId: string, events: DomainEvent[]][]) {
      const recorded: RecordedEvent[] = batches.flatMap(([messageId, events]) =>
        events.map((e) => {
          position++;
          const streamId = `message-${messageId}`;
          const revision = (revisions.get(streamId) ?? -1) + 1;
          revisions.set(streamId, revision);
          return {
            id: `00000000-0000-4000-8000-${position.toString().padStart(12, '0')}`,
            streamId,
            revision,
            type: e.type,
            data: e.data,
            metadata: {},
            schemaVersion: 1,
            recordedAt: new Date(Date.UTC(2024, 4, 1, 12) + Number(position) * 1000),
            position: { commit: position, prepare: position },
          };
        }),
      );
      await database.db.transaction((trx) => projection.handle(recorded, trx, t));
    },
    message: (id: string) => database.db(t('messages')).where({ id }).first(),
    timeline: (id: string) => database.db(t('message_events')).where({ message_id: id }).orderBy('revision'),
    drop: () => database.drop(),
  };
}

export function emailQueued(messageId: string, over: Partial<EmailQueued['data']> = {}): EmailQueued {
  return {
    type: 'EmailQueued',
    data: {
      messageId,
      accountId: 'acc1',
      apiKeyId: 'key1',
      campaignId: null,
      templateId: null,
      unsubscribeUrl: null,
      tracking: 'service',
      provider: 'sandbox',
      from: 'App <app@example.com>',
      fromEmail: 'app@example.com',
      fromName: 'App',
      to: 'ada@example.org',
      replyTo: null,
      subject: 'Welcome',
      html: '<p>Hi</p>',
      text: 'Hi',
      headers: [],
      queuedAt: '2024-05-01T10:00:00.000Z',
      ...over,
    },
  };
}

export function smsQueued(messageId: string): SmsQueued {
  return {
    type: 'SmsQueued',
    data: {
      messageId,
      accountId: 'acc1',
      apiKeyId: null,
      to: '+14155552671',
      body: 'Your code is 1234',
      segments: 1,
      encoding: 'gsm7',
      originationNumber: '+14155550000',
      provider: 'sandbox',
      queuedAt: '2024-05-01T10:00:00.000Z',
    },
  };
}

let providerEvent = 0;
const base = (occurredAt = '2024-05-01T11:00:00.000Z') => ({ providerEventId: `pe-${++providerEvent}`, occurredAt, recipient: 'ada@example.org' });

export const accepted = (providerMessageId = 'pm-1') => ({
  type: 'ProviderAccepted',
  data: { providerMessageId, provider: 'sandbox', acceptedAt: '2024-05-01T10:00:01.000Z', attempt: 1 },
});
export const attemptFailed = (error = 'timeout') => ({
  type: 'ProviderAttemptFailed',
  data: { attempt: 1, error, nextAttemptAt: '2024-05-01T10:01:00.000Z', failedAt: '2024-05-01T10:00:01.000Z' },
});
export const failed = (error = 'rejected') => ({ type: 'ProviderFailed', data: { attempt: 2, error, failedAt: '2024-05-01T10:02:00.000Z' } });
export const delivered = (occurredAt?: string) => ({ type: 'Delivered', data: { ...base(occurredAt), smtpResponse: '250 OK' } });
export const bounced = (bounceType: 'hard' | 'soft' = 'hard', occurredAt?: string) => ({
  type: 'Bounced',
  data: { ...base(occurredAt), bounceType, diagnostic: 'smtp; 550 5.1.1 user unknown' },
});
export const complained = (occurredAt?: string) => ({ type: 'Complained', data: { ...base(occurredAt), feedbackType: 'abuse' } });
export const opened = (suspectedBot = false, occurredAt?: string) => ({
  type: 'Opened',
  data: { ...base(occurredAt), suspectedBot, source: 'service', userAgent: suspectedBot ? 'GoogleImageProxy' : 'Mozilla/5.0' },
});
export const clicked = (suspectedBot = false, occurredAt?: string) => ({
  type: 'Clicked',
  data: { ...base(occurredAt), url: 'https://example.com/a', suspectedBot, source: 'service' },
});
