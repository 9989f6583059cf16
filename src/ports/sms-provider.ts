/** The SMS provider port. Adapters: SNS, sandbox. */
import type { EmailSendResult } from './email-provider.js';

export interface OutgoingSms {
  /** Our message id, the idempotency key */
  messageId: string;
  /** E.164 */
  to: string;
  body: string;
  originationNumber: string;
}

export interface OptedOutPage {
  phoneNumbers: string[];
  nextToken?: string;
}

export interface SmsProvider {
  readonly name: 'sns' | 'sandbox';
  send(sms: OutgoingSms): Promise<EmailSendResult>;
  /** Why this server cannot call the provider (no credentials), or null; absent: it always can. */
  missingCredentials?(): Promise<string | null>;
  /** One page of opted-out numbers (E.164); loop while nextToken is set. */
  listOptedOut(nextToken?: string): Promise<OptedOutPage>;
}
