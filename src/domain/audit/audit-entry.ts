import { isVerified, type IdentityChecks, type IdentityKind } from '../accounts/identity.js';

/**
 * The audit trail: which recorded events are admin actions, and what each says (who, from where, what,
 * on what, before and after). One rule per event type; an event type without a rule is not an admin
 * action. A new admin event is listed by adding its rule here.
 */

export type AuditActorType = 'user' | 'apiKey' | 'system';
export interface AuditActor {
  type: AuditActorType;
  id: string;
}
export interface AuditTarget {
  type: string;
  id: string;
}
export type AuditFields = Record<string, unknown>;
export type AuditChanges = Record<string, { from: unknown; to: unknown }>;

/** What the trail remembers of a target between its events, so a change can say what it was before. */
export interface AuditTargetState {
  accountId: string;
  fields: AuditFields;
}

export interface AuditEntry {
  accountId: string;
  at: string;
  actor: AuditActor;
  ip: string | null;
  action: string;
  target: AuditTarget;
  changes: AuditChanges;
}

/** What a rule reads of a recorded event. */
export interface AuditableEvent {
  type: string;
  data: any;
  metadata: { actor?: unknown; clientIp?: unknown; person?: unknown };
  recordedAt: Date;
}

interface AuditRule {
  /** the action, or null when this event is no admin action (a suppression a bounce caused) */
  action(data: any, previous: AuditTargetState | null): string | null;
  target(data: any, previous: AuditTargetState | null, metadata: AuditableEvent['metadata']): AuditTarget;
  /** key of the remembered state of the target this event changes (globally unique); absent: nothing remembered */
  stateKey?(data: any): string;
  /** the target's fields after the event (null: gone); the entry's changes are their difference from before */
  fields?(data: any, previous: AuditFields | null): AuditFields | null;
  /** the changes of an event whose target keeps no state */
  changes?(data: any): AuditChanges;
  /** the account, when the event's data does not name it (it is then taken from the remembered state) */
  accountId?(data: any): string | undefined;
}

// Settings recorded before the provider rate and retention existed have neither: unset, as now.
const settingsFields = (s: { dailySendCap: number; emailProvider: string; tracking: string; providerRatePerSecond?: number | null; retentionDays?: number | null }) => ({
  dailySendCap: s.dailySendCap,
  emailProvider: s.emailProvider,
  tracking: s.tracking,
  providerRatePerSecond: s.providerRatePerSecond ?? null,
  retentionDays: s.retentionDays ?? null,
});
const smsFields = (sms: Record<string, unknown>) => Object.fromEntries(Object.entries(sms).map(([k, v]) => [`sms.${k}`, v]));
// the records to publish change with the provider that checks: the owner has DNS to edit again
const identityFields = (kind: IdentityKind, d: IdentityChecks) => ({ dkim: d.dkim, spf: d.spf, mailFrom: d.mailFrom, verified: isVerified(kind, d), dnsRecords: d.dnsRecords });
const identityTarget = (kind: unknown) => (kind === 'domain' ? 'domain' : 'sender');
const templateFields = (d: Record<string, unknown>) => ({ name: d.name, subject: d.subject, html: d.html, text: d.text });
// a campaign's definition as the trail shows it (its variables fill the template for everyone, they
// name no one); a change names only what it changed
const campaignFields = (d: Record<string, unknown>) =>
  Object.fromEntries(['name', 'templateId', 'fromEmail', 'fromName', 'replyTo', 'audience', 'variables'].filter((k) => d[k] !== undefined).map((k) => [k, d[k]]));

/** A campaign event after its creation: its data names no account, the remembered campaign does. */
function campaignAction(action: string | ((data: any) => string | null), changes: (data: any) => AuditChanges = () => ({})): AuditRule {
  return {
    action: typeof action === 'string' ? () => action : action,
    target: (d) => ({ type: 'campaign', id: d.campaignId }),
    stateKey: (d) => `campaign:${d.campaignId}`,
    changes,
  };
}

const RULES: Record<string, AuditRule> = {
  AccountCreated: {
    action: () => 'account.created',
    target: (d) => ({ type: 'account', id: d.accountId }),
    stateKey: (d) => `account:${d.accountId}`,
    fields: (d) => ({ name: d.name, ...settingsFields(d.settings), ...smsFields(d.sms) }),
  },
  SettingsChanged: {
    action: () => 'settings.changed',
    target: (d) => ({ type: 'account', id: d.accountId }),
    stateKey: (d) => `account:${d.accountId}`,
    fields: (d, before) => ({ ...before, ...settingsFields(d.settings) }),
  },
  SmsSettingsChanged: {
    action: () => 'sms_settings.changed',
    target: (d) => ({ type: 'account', id: d.accountId }),
    stateKey: (d) => `account:${d.accountId}`,
    fields: (d, before) => ({ ...before, ...smsFields(d.sms) }),
  },
  UserRegistered: {
    action: () => 'user.created',
    target: (d) => ({ type: 'user', id: d.userId }),
    // the key an actor `user:<id>` names: the trail shows the acting user's email from it
    stateKey: (d) => `user:${d.userId}`,
    fields: (d) => ({ email: d.email, role: d.role }),
  },
  UserPasswordChanged: {
    action: () => 'user.password_changed',
    target: (d) => ({ type: 'user', id: d.userId }),
    changes: () => ({}),
  },
  UserSignedIn: {
    action: () => 'user.signed_in',
    target: (d) => ({ type: 'user', id: d.userId }),
    changes: () => ({}),
  },
  UserSignedOut: {
    action: () => 'user.signed_out',
    target: (d) => ({ type: 'user', id: d.userId }),
    changes: () => ({}),
  },
  ApiKeyCreated: {
    action: () => 'api_key.created',
    target: (d) => ({ type: 'api_key', id: d.id }),
    stateKey: (d) => `apikey:${d.id}`,
    fields: (d) => ({ name: d.name, prefix: d.prefix, scopes: d.scopes, expiresAt: d.expiresAt, ipAllowlist: d.ipAllowlist, dailyLimit: d.dailyLimit, revokedAt: null }),
  },
  ApiKeyRevoked: {
    action: () => 'api_key.revoked',
    target: (d) => ({ type: 'api_key', id: d.id }),
    stateKey: (d) => `apikey:${d.id}`,
    fields: (d, before) => ({ ...before, revokedAt: d.revokedAt }),
  },
  IdentityAdded: {
    action: (d) => `${identityTarget(d.kind)}.added`,
    target: (d) => ({ type: identityTarget(d.kind), id: d.id }),
    stateKey: (d) => `identity:${d.id}`,
    fields: (d) => ({ kind: d.kind, value: d.value, ...identityFields(d.kind, d) }),
  },
  IdentityChecked: {
    action: (_d, before) => `${identityTarget(before?.fields.kind)}.checked`,
    target: (d, before) => ({ type: identityTarget(before?.fields.kind), id: d.id }),
    stateKey: (d) => `identity:${d.id}`,
    fields: (d, before) => ({ ...before, ...identityFields((before?.kind ?? 'domain') as IdentityKind, d) }),
  },
  IdentityRemoved: {
    action: (d) => `${identityTarget(d.kind)}.removed`,
    target: (d) => ({ type: identityTarget(d.kind), id: d.id }),
    stateKey: (d) => `identity:${d.id}`,
    fields: () => null,
  },
  // The secret is no field: an audit trail must not become a place to read it from.
  WebhookSubscribed: {
    action: () => 'webhook.created',
    target: (d) => ({ type: 'webhook', id: d.id }),
    stateKey: (d) => `webhook:${d.id}`,
    fields: (d) => ({ url: d.url, events: d.events }),
  },
  WebhookChanged: {
    action: () => 'webhook.changed',
    target: (d) => ({ type: 'webhook', id: d.id }),
    stateKey: (d) => `webhook:${d.id}`,
    fields: (d, before) => ({ ...before, ...(d.url ? { url: d.url } : {}), ...(d.events ? { events: d.events } : {}) }),
  },
  WebhookRemoved: {
    action: () => 'webhook.deleted',
    target: (d) => ({ type: 'webhook', id: d.id }),
    stateKey: (d) => `webhook:${d.id}`,
    fields: () => null,
  },
  WebhookSecretRevealed: {
    action: () => 'webhook.secret_revealed',
    target: (d) => ({ type: 'webhook', id: d.id }),
    changes: () => ({}),
  },
  // the secrets themselves never: only when the new one signs from
  WebhookSecretRotated: {
    action: () => 'webhook.secret_rotated',
    target: (d) => ({ type: 'webhook', id: d.id }),
    changes: (d) => ({ signsFrom: { from: null, to: d.nextAt ?? d.rotatedAt } }),
  },
  // A delivery the service schedules is no admin action; the dashboard's Test is.
  WebhookDeliveryScheduled: {
    action: (d) => (d.event === 'webhook.test' ? 'webhook.tested' : null),
    target: (d) => ({ type: 'webhook', id: d.subscriptionId }),
    changes: () => ({}),
  },
  WebhookRetryRequested: {
    action: () => 'webhook_delivery.retried',
    target: (d) => ({ type: 'webhook_delivery', id: d.deliveryId }),
    changes: (d) => ({ series: { from: d.series - 1, to: d.series } }),
  },
  // a person's data handed to an admin; the trail names them by keyed hash, as it names contacts
  PersonalDataExported: {
    action: () => 'contact.exported',
    target: (d) => ({ type: 'contact', id: d.person }),
    changes: () => ({}),
  },
  CampaignCreated: {
    action: () => 'campaign.created',
    target: (d) => ({ type: 'campaign', id: d.campaignId }),
    stateKey: (d) => `campaign:${d.campaignId}`,
    fields: (d) => campaignFields(d),
  },
  CampaignChanged: {
    action: () => 'campaign.changed',
    target: (d) => ({ type: 'campaign', id: d.campaignId }),
    stateKey: (d) => `campaign:${d.campaignId}`,
    fields: (d, before) => ({ ...before, ...campaignFields(d.changes) }),
  },
  CampaignDeleted: {
    action: () => 'campaign.deleted',
    target: (d) => ({ type: 'campaign', id: d.campaignId }),
    stateKey: (d) => `campaign:${d.campaignId}`,
    fields: () => null,
  },
  CampaignScheduled: campaignAction('campaign.scheduled', (d) => ({ scheduledAt: { from: null, to: d.scheduledAt } })),
  CampaignStarted: campaignAction('campaign.started'),
  // pauses and resumptions of the service's own (a provider's rate, a failure rate) are not admin actions
  CampaignPaused: campaignAction((d) => (d.reason === 'manual' ? 'campaign.paused' : null)),
  CampaignResumed: campaignAction((d) => (d.auto ? null : 'campaign.resumed')),
  CampaignCancelled: campaignAction('campaign.cancelled'),
  TemplateSaved: {
    action: (d) => (d.created ? 'template.created' : 'template.updated'),
    target: (d) => ({ type: 'template', id: d.id }),
    stateKey: (d) => `template:${d.id}`,
    fields: (d) => templateFields(d),
  },
  TemplateDeleted: {
    action: () => 'template.deleted',
    target: (d) => ({ type: 'template', id: d.id }),
    stateKey: (d) => `template:${d.id}`,
    fields: () => null,
  },
  // Only an admin's own suppressions: bounces, complaints and unsubscribes are the recipients' doing,
  // and an import's entries are that import's.
  // A suppression and an erasure name the person by keyed hash only (the address is personal data:
  // docs/privacy.md); a store that adds no hash leaves the address.
  AddressSuppressed: {
    action: (d) => (d.source === 'manual' ? 'suppression.added' : null),
    target: (d, _before, m) => ({ type: 'suppression', id: (m.person as string | undefined) ?? d.value }),
    changes: (d) => ({ reason: { from: null, to: d.reason }, detail: { from: null, to: d.detail } }),
  },
  // an import is one action however many entries it brings (they show on the list as source import)
  SuppressionListImported: {
    action: () => 'suppressions.imported',
    target: (d) => ({ type: 'account', id: d.accountId }),
    changes: (d) => ({ entries: { from: null, to: d.entries } }),
  },
  SuppressionListExported: {
    action: () => 'suppressions.exported',
    target: (d) => ({ type: 'account', id: d.accountId }),
    changes: (d) => ({ entries: { from: null, to: d.entries } }),
  },
  SuppressionLifted: {
    action: () => 'suppression.removed',
    target: (d, _before, m) => ({ type: 'suppression', id: (m.person as string | undefined) ?? d.value }),
    changes: () => ({}),
  },
  // A contact's fields are personal data (sealed): the trail says who changed which person, never what.
  ContactUpserted: {
    action: (d) => (d.created ? 'contact.created' : 'contact.updated'),
    target: (d, _before, m) => ({ type: 'contact', id: (m.person as string | undefined) ?? d.contactId }),
    changes: () => ({}),
  },
  ContactErased: {
    action: () => 'contact.erased',
    target: (d) => ({ type: 'contact', id: d.person }),
    changes: () => ({}),
  },
};

/** The event types the trail lists (a reader of the log need read no other). */
export const AUDITED_EVENT_TYPES = Object.keys(RULES);

/** The key of the remembered state an event of this type reads and replaces, or null. */
export function auditStateKey(event: Pick<AuditableEvent, 'type' | 'data'>): string | null {
  return RULES[event.type]?.stateKey?.(event.data) ?? null;
}

/** `user:<id>` and `apikey:<id>` as the request's principal recorded them; anything else is the service itself. */
export function auditActor(actor: unknown): AuditActor {
  const text = typeof actor === 'string' && actor ? actor : 'system';
  if (text.startsWith('user:')) return { type: 'user', id: text.slice('user:'.length) };
  if (text.startsWith('apikey:')) return { type: 'apiKey', id: text.slice('apikey:'.length) };
  return { type: 'system', id: text };
}

/** The fields that differ between two states, each with its value before and after (null where absent). */
export function diffFields(before: AuditFields | null, after: AuditFields | null): AuditChanges {
  const changes: AuditChanges = {};
  for (const field of new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])) {
    const from = before?.[field] ?? null;
    const to = after?.[field] ?? null;
    if (JSON.stringify(from) !== JSON.stringify(to)) changes[field] = { from, to };
  }
  return changes;
}

/**
 * One recorded event as the trail sees it, given the remembered state of its target: the entry (null
 * when it is no admin action) and the target's state after it (undefined: unchanged; null: forgotten).
 * Returns null for an event type the trail does not follow.
 */
export function auditEvent(
  event: AuditableEvent,
  previous: AuditTargetState | null,
): { entry: AuditEntry | null; state: AuditTargetState | null | undefined } | null {
  const rule = RULES[event.type];
  if (!rule) return null;
  const d = event.data;
  const accountId: string | undefined = rule.accountId?.(d) ?? d.accountId ?? previous?.accountId;
  const fields = rule.fields ? rule.fields(d, previous?.fields ?? null) : undefined;
  const state = fields === undefined ? undefined : fields && accountId ? { accountId, fields } : null;
  const action = rule.action(d, previous);
  // An event about a target the trail never saw created, and naming no account, belongs to no one it can show.
  if (!action || !accountId) return { entry: null, state };
  const ip = event.metadata.clientIp;
  return {
    entry: {
      accountId,
      at: event.recordedAt.toISOString(),
      actor: auditActor(event.metadata.actor),
      ip: typeof ip === 'string' ? ip : null,
      action,
      target: rule.target(d, previous, event.metadata),
      changes: fields === undefined ? (rule.changes?.(d) ?? {}) : diffFields(previous?.fields ?? null, fields),
    },
    state,
  };
}
