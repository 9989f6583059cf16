import { normaliseEmail } from '../email/address.js';
import type { RecordedEvent } from '../../ports/event-store.js';
import { withoutPersonalPart } from '../provider-events/provider-event-ids.js';

/**
 * What a read model keeps in place of an erased person's keyed hash: a contact added later with the
 * same address has the same hash and must not be joined to what was erased, while the erasure can still
 * find the rows it erased (to delete their copies outside the log).
 */
export const erasedPerson = (person: string) => `erased:${person}`;

/** The person an event names: the keyed hash the sealing store adds (an event read without it: the address itself). */
export const personOfEvent = (e: RecordedEvent, address: string | null): string => (e.metadata.person as string | undefined) ?? address ?? '';

/**
 * Which fields of which events are personal data, whose they are, and what a reader sees once they
 * can no longer be read (docs/privacy.md). The store seals these fields under the person's data key;
 * everything else (statuses, counts, times, ids, the sender's own fields) stays readable, so counts,
 * statuses and aggregates survive an erasure.
 */

/** Whose data an event holds: a person named in the event, or the person of the stream's first sealed event (a message's outcomes). */
export type Owner = { accountId: string; address: string } | 'stream';

/**
 * `profile`: held as long as the person is (contact fields, suppressions); `day`: message content,
 * under a key of the day it was queued, so a retention period can destroy whole days.
 */
export type KeyScope = 'profile' | 'day';

export interface PersonalDataRule {
  /** top-level fields of `data` that are sealed (absent ones are skipped) */
  fields: readonly string[];
  /** what each field reads as when its key is gone; a field mapped to undefined is left out */
  redacted: Readonly<Record<string, unknown>>;
  owner(data: Record<string, any>): Owner;
  scope: KeyScope;
}

const OUTCOME_FIELDS = ['recipient', 'ip', 'userAgent', 'url', 'diagnostic', 'smtpResponse'] as const;
const outcome: PersonalDataRule = {
  fields: OUTCOME_FIELDS,
  redacted: Object.fromEntries(OUTCOME_FIELDS.map((f) => [f, null])),
  owner: () => 'stream',
  scope: 'day',
};

const providerError: PersonalDataRule = { fields: ['error'], redacted: { error: null }, owner: () => 'stream', scope: 'day' };

/** The person a contact.* webhook body is about: its email, or the phone number of an SMS opt-out. */
function webhookSubject(d: Record<string, any>): Owner {
  let address: unknown;
  try {
    const body = JSON.parse(d.body);
    address = body?.data?.email ?? body?.data?.phone;
  } catch {
    /* a body that is not ours names nobody */
  }
  return { accountId: d.accountId, address: address as string };
}

export const PERSONAL_DATA: Readonly<Record<string, PersonalDataRule>> = {
  // the caller's unsubscribe URL is often the recipient's own (`…/unsubscribe?email=<address>`)
  EmailQueued: {
    fields: ['to', 'subject', 'html', 'text', 'headers', 'attachments', 'unsubscribeUrl'],
    redacted: { to: null, subject: null, html: null, text: null, headers: [], attachments: undefined, unsubscribeUrl: null },
    owner: (d) => ({ accountId: d.accountId, address: d.to }),
    scope: 'day',
  },
  SmsQueued: {
    fields: ['to', 'body'],
    redacted: { to: null, body: null },
    owner: (d) => ({ accountId: d.accountId, address: d.to }),
    scope: 'day',
  },
  // a provider's refusal may quote the recipient (SES: "... failed the check in region US-EAST-1: <address>")
  ProviderAttemptFailed: providerError,
  ProviderFailed: providerError,
  Delivered: outcome,
  Bounced: outcome,
  Complained: outcome,
  Opened: outcome,
  Clicked: outcome,
  ContactUpserted: {
    fields: ['email', 'fields'],
    redacted: { email: null, fields: null },
    owner: (d) => ({ accountId: d.accountId, address: d.email }),
    scope: 'profile',
  },
  // the body names the person and the contact's names; it is sent as it was recorded, so it is sealed whole
  WebhookDeliveryScheduled: {
    fields: ['body'],
    redacted: { body: null },
    owner: webhookSubject,
    scope: 'profile',
  },
  AddressSuppressed: {
    fields: ['value', 'detail'],
    redacted: { value: null, detail: null },
    owner: (d) => ({ accountId: d.accountId, address: d.value }),
    scope: 'profile',
  },
  SuppressionLifted: {
    fields: ['value'],
    redacted: { value: null },
    owner: (d) => ({ accountId: d.accountId, address: d.value }),
    scope: 'profile',
  },
};

/**
 * The form a person's address is hashed in: emails trimmed and lower-cased (the form suppressions and
 * contacts compare), phone numbers as E.164 already is. `Bob@x.com` and `bob@x.com` are one person.
 */
export function normaliseAddress(address: string): string {
  return address.includes('@') ? normaliseEmail(address) : address.trim();
}

/**
 * What a person's key for `scope` is called: one profile key, and one key per UTC day of message
 * content: the day the message was queued (its `queuedAt`, which the read models show as createdAt, so
 * retention's cutoff and theirs agree), else `at`.
 */
export function keyScopeName(rule: PersonalDataRule, at: Date, data: Record<string, unknown> = {}): string {
  if (rule.scope === 'profile') return 'profile';
  const queued = typeof data.queuedAt === 'string' ? new Date(data.queuedAt) : null;
  return (queued && !Number.isNaN(queued.getTime()) ? queued : at).toISOString().slice(0, 10);
}

/** The sealed part of an event's data: the listed fields present in it. */
export function personalPart(rule: PersonalDataRule, data: Record<string, unknown>): { personal: Record<string, unknown>; rest: Record<string, unknown> } {
  const personal: Record<string, unknown> = {};
  const rest: Record<string, unknown> = { ...data };
  for (const f of rule.fields) {
    if (f in rest) {
      personal[f] = rest[f];
      delete rest[f];
    }
  }
  return { personal, rest };
}

/**
 * The event's data once its personal part can no longer be read; a provider event id an earlier version
 * ended with the recipient's address or a link (kept in clear) without it.
 */
export function redact(rule: PersonalDataRule, data: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...data };
  for (const [f, v] of Object.entries(rule.redacted)) {
    if (v === undefined) delete out[f];
    else out[f] = v;
  }
  if (typeof out.providerEventId === 'string') out.providerEventId = withoutPersonalPart(out.providerEventId);
  return out;
}

/**
 * The UTC days whose message content a retention of `days` makes unreadable at `now`: every day
 * strictly before the first day still kept.
 */
export function retentionCutoff(days: number, now: Date): string {
  return new Date(now.getTime() - days * 86_400_000).toISOString().slice(0, 10);
}
