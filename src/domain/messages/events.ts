/** Events of a `message-<id>` stream: one message's whole life, email or SMS. */

import type { QueuedAttachment } from '../email/attachments.js';

export interface EmailContent {
  from: string;
  fromEmail: string;
  fromName: string | null;
  to: string;
  replyTo: string | null;
  subject: string;
  /** rendered HTML as handed to the provider (tracking already applied) */
  html: string | null;
  text: string | null;
  headers: { name: string; value: string }[];
  /**
   * The attachments' summaries and the ids their bytes are kept under in the attachment store (never
   * the bytes: every reader of the log would move them). Absent on messages without attachments.
   */
  attachments?: QueuedAttachment[];
}

export interface EmailQueued {
  type: 'EmailQueued';
  data: EmailContent & {
    messageId: string;
    accountId: string;
    apiKeyId: string | null;
    campaignId: string | null;
    templateId: string | null;
    unsubscribeUrl: string | null;
    tracking: 'service' | 'provider' | 'none';
    provider: 'ses' | 'postmark' | 'sandbox';
    queuedAt: string;
    /** the sender's labels; absent on events recorded before they existed, and when none were given */
    tags?: string[];
    metadata?: Record<string, string>;
    /** a scheduled send: the provider is called at this instant, not before (absent: at once) */
    sendAt?: string | null;
  };
}

export interface SmsQueued {
  type: 'SmsQueued';
  data: {
    messageId: string;
    accountId: string;
    apiKeyId: string | null;
    to: string;
    body: string;
    segments: number;
    encoding: 'gsm7' | 'ucs2';
    originationNumber: string;
    provider: 'sns' | 'sandbox';
    queuedAt: string;
  };
}

export interface ProviderAccepted {
  type: 'ProviderAccepted';
  data: { providerMessageId: string; provider: string; acceptedAt: string; attempt: number };
}
export interface ProviderAttemptFailed {
  type: 'ProviderAttemptFailed';
  data: { attempt: number; error: string; nextAttemptAt: string; failedAt: string };
}
export interface ProviderFailed {
  type: 'ProviderFailed';
  data: { attempt: number; error: string; failedAt: string };
}

/** A scheduled (or still queued) message withdrawn before the provider was called: it is never sent. */
export interface MessageCancelled {
  type: 'MessageCancelled';
  data: { cancelledAt: string };
}

/** Provider-reported outcomes; `providerEventId` makes a redelivered provider event a no-op. */
interface ProviderEventBase {
  providerEventId: string;
  occurredAt: string;
  recipient: string;
}
export interface Delivered {
  type: 'Delivered';
  data: ProviderEventBase & { smtpResponse?: string };
}
export interface Bounced {
  type: 'Bounced';
  data: ProviderEventBase & { bounceType: 'hard' | 'soft'; subType?: string; diagnostic?: string };
}
export interface Complained {
  type: 'Complained';
  data: ProviderEventBase & { feedbackType?: string };
}
export interface Opened {
  type: 'Opened';
  data: ProviderEventBase & { userAgent?: string; ip?: string; suspectedBot: boolean; source: 'service' | 'provider' };
}
export interface Clicked {
  type: 'Clicked';
  data: ProviderEventBase & { url: string; userAgent?: string; ip?: string; suspectedBot: boolean; source: 'service' | 'provider' };
}

export type ProviderOutcome = Delivered | Bounced | Complained | Opened | Clicked;
export type MessageEvent = EmailQueued | SmsQueued | ProviderAccepted | ProviderAttemptFailed | ProviderFailed | MessageCancelled | ProviderOutcome;

/** Every type a message stream holds, for readers that want the message streams' events and a few others. */
export const MESSAGE_EVENT_TYPES = [
  'EmailQueued',
  'SmsQueued',
  'ProviderAccepted',
  'ProviderAttemptFailed',
  'ProviderFailed',
  'MessageCancelled',
  'Delivered',
  'Bounced',
  'Complained',
  'Opened',
  'Clicked',
] as const satisfies readonly MessageEvent['type'][];
// A type added to MessageEvent and not to the list above fails to compile here.
const everyMessageEventListed: Exclude<MessageEvent['type'], (typeof MESSAGE_EVENT_TYPES)[number]> extends never ? true : never = true;
void everyMessageEventListed;

export const messageStream = (id: string) => `message-${id}`;
export const MESSAGE_STREAM_PREFIX = 'message-';
/** Whether `id` can name a message (ours are cuid2s, a campaign's `<campaign>.<contact>`): anything else is not one, unread. */
export const isMessageId = (id: string) => /^[\w.:-]{1,100}$/.test(id);
