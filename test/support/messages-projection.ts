import type { EmailQueued, SmsQueued } from '../../src/domain/messages/events.js';
import type { Projection } from '../../src/projections/projection.js';
import { projectionSpec } from './projection-spec.js';

/**
 * given-events/then-rows for the messages projection: `given` takes message ids, and every event is
 * recorded one second after the previous one (so `updated_at` shows which event came last).
 */
export async function messagesProjectionSpec(projection: Projection) {
  const spec = await projectionSpec(projection, {
    streamId: (messageId) => `message-${messageId}`,
    recordedAt: (position) => new Date(Date.UTC(2024, 4, 1, 12) + Number(position) * 1000),
  });
  return {
    ...spec,
    message: (id: string) => spec.rows('messages').where({ id }).first(),
    timeline: (id: string) => spec.rows('message_events').where({ message_id: id }).orderBy('revision'),
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
