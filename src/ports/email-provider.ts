import type { NormalizedProviderEvent } from '../domain/provider-events/normalized.js';

/** The email provider port. Adapters: SES v2, Postmark, sandbox (records, never delivers). */

export interface OutgoingEmail {
  /** Our message id. Carried to the provider (SES tag / Postmark Metadata `msg_id`) so its events map back, and used as the idempotency key. */
  messageId: string;
  /** Formatted From header, e.g. `App <no-reply@example.com>` */
  from: string;
  to: string;
  replyTo?: string;
  subject: string;
  html?: string;
  text?: string;
  headers: { name: string; value: string }[];
  /** true when the service rewrites links itself: the provider must not wrap them again. */
  disableProviderTracking: boolean;
  /** the sender's tags and metadata, for the provider's own tagging (empty when none) */
  tags?: string[];
  metadata?: Record<string, string>;
  /** files to attach; one with a `contentId` is an inline part (`cid:`) */
  attachments?: { filename: string; contentType: string; contentId: string | null; size: number; content: Buffer }[];
}

export interface EmailSendResult {
  providerMessageId: string;
  /** what the provider reports about the send at once (the sandbox's simulator), recorded as its notifications would be */
  reports?: NormalizedProviderEvent[];
}

export type CheckStatus = 'pending' | 'verified' | 'failed';

export interface IdentityStatus {
  dkim: CheckStatus;
  spf: CheckStatus;
  mailFrom: CheckStatus;
  /** DNS records the owner must publish */
  dnsRecords: { type: string; name: string; value: string }[];
}

/**
 * A provider failure. `retryable` errors (throttling, outages) are retried with backoff;
 * the others end the message as `failed` with `message` as the detail. `mayHaveSent`: the request may
 * have reached the provider and been taken before the failure (a timeout, a dropped connection, a 5xx),
 * unlike a refusal such as throttling.
 */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly code?: string,
    readonly mayHaveSent = false,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

export interface EmailProvider {
  readonly name: 'ses' | 'postmark' | 'sandbox';
  send(email: OutgoingEmail): Promise<EmailSendResult>;
  /**
   * Asks the provider whether it accepted a message carrying our id (null: it did not). Used after a
   * worker died during a send, to not send it twice. Absent where the provider has no such lookup
   * (SES): its own events (Send, through SNS) are the only proof there.
   */
  findSent?(messageId: string): Promise<EmailSendResult | null>;
  /** Why this server cannot call the provider (no credentials), or null; absent: it always can. */
  missingCredentials?(): Promise<string | null>;
  /** Registers a domain or a single email address with the provider and returns its current status. */
  createIdentity(identity: string): Promise<IdentityStatus>;
  getIdentityStatus(identity: string): Promise<IdentityStatus>;
}
