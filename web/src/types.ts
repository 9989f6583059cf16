// Shapes of the answers the pages read, written by hand: the schema (web/openapi.json) types the
// request side of every call, and the answers as far as a page relies on them.

export interface MessageSummary {
  id: string;
  channel: 'email' | 'sms';
  status: string;
  from: string;
  /** null once the recipient is erased or the message is past the account's retention */
  to: string | null;
  subject: string | null;
  provider: string;
  providerMessageId: string | null;
  apiKeyId: string | null;
  opens: number;
  clicks: number;
  error: string | null;
  tags: string[];
  createdAt: string;
  updatedAt: string;
}
export interface MessageDetail extends MessageSummary {
  events: { type: string; occurredAt: string; data: Record<string, unknown> }[];
  metadata: Record<string, string>;
  sendAt: string | null;
  /** email only: an SMS has none */
  attachments?: { filename: string; contentType: string; size: number; contentId: string | null }[];
  /** with a dashboard session: the campaign that sent it, and the recipient's contact (null when none) */
  campaign?: { id: string; name: string } | null;
  contact?: { email: string; status: string } | null;
}
export interface HistoryEvent {
  type: string;
  version: number;
  occurredAt: string;
  actor: string | null;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
}
export interface Webhook {
  id: string;
  url: string;
  events: string[];
  secret: string;
  createdAt: string;
}
export interface Delivery {
  id: string;
  event: string;
  /** the payload's `id`, which the receiver deduplicates on */
  eventId: string | null;
  status: 'delivered' | 'retrying' | 'failed';
  attempts: number;
  lastResponseStatus: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
}
export interface Identity {
  id: string;
  domain?: string;
  email?: string;
  dkim: string;
  spf: string;
  mailFrom: string;
  verified: boolean;
  dnsRecords: { type: string; name: string; value: string }[];
}
export interface ApiKey {
  id: string;
  name: string;
  key?: string;
  scopes: string[];
  expiresAt: string | null;
  ipAllowlist: string[] | null;
  dailyLimit: number | null;
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
}
export interface Suppression {
  email?: string | null;
  phone?: string | null;
  /** an erased person's entry: no address, their keyed hash only (the suppression still holds) */
  person?: string;
  reason: string;
  /** what an admin wrote as the reason, or a bounce's diagnostic */
  detail?: string | null;
  source: string;
  createdAt: string;
}
export interface Contact {
  id: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  company: string | null;
  tags: string[];
  status: string;
  listIds: string[];
}
export interface Template {
  id: string;
  name: string;
  subject: string;
  html: string;
  text: string;
}
