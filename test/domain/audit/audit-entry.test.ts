import { expect } from 'chai';
import { AUDITED_EVENT_TYPES, auditActor, auditEvent, auditStateKey, type AuditableEvent, type AuditTargetState } from '../../../src/domain/audit/audit-entry.js';

const at = new Date('2026-03-01T09:30:00.000Z');
const byUser = { actor: 'user:u1', clientIp: '203.0.113.7' };
const event = (type: string, data: unknown, metadata: AuditableEvent['metadata'] = byUser): AuditableEvent => ({ type, data, metadata, recordedAt: at });

/** given the events before (folded as the projection folds them), when this one → its entry */
function given(...before: AuditableEvent[]) {
  const states = new Map<string, AuditTargetState | null>();
  for (const e of before) {
    const key = auditStateKey(e);
    const seen = auditEvent(e, key ? (states.get(key) ?? null) : null);
    if (key && seen?.state !== undefined) states.set(key, seen.state);
  }
  return {
    when(e: AuditableEvent) {
      const key = auditStateKey(e);
      return auditEvent(e, key ? (states.get(key) ?? null) : null)?.entry;
    },
  };
}

const created = event(
  'AccountCreated',
  {
    accountId: 'a1',
    name: 'Acme',
    createdAt: at.toISOString(),
    settings: { dailySendCap: 1000, emailProvider: 'sandbox', tracking: 'service' },
    sms: { enabled: false, originationNumber: null, sandbox: true, sandboxDestinations: [] },
  },
  { actor: 'system' },
);

describe('audit trail: which events are admin actions, and what each entry says', () => {
  it('given an account, when its settings change, then settings.changed by the user from their address, with only the changed fields before and after', () => {
    const entry = given(created).when(
      event('SettingsChanged', { accountId: 'a1', settings: { dailySendCap: 5000, emailProvider: 'sandbox', tracking: 'none' }, changedAt: at.toISOString() }),
    );
    expect(entry).to.deep.equal({
      accountId: 'a1',
      at: '2026-03-01T09:30:00.000Z',
      actor: { type: 'user', id: 'u1' },
      ip: '203.0.113.7',
      action: 'settings.changed',
      target: { type: 'account', id: 'a1' },
      changes: { dailySendCap: { from: 1000, to: 5000 }, tracking: { from: 'service', to: 'none' } },
    });
  });

  it('given changed settings, when they change again, then "from" is the previous change\'s value', () => {
    const first = event('SettingsChanged', { accountId: 'a1', settings: { dailySendCap: 5000, emailProvider: 'sandbox', tracking: 'service' } });
    const second = event('SettingsChanged', { accountId: 'a1', settings: { dailySendCap: 7000, emailProvider: 'sandbox', tracking: 'service' } });
    expect(given(created, first).when(second)?.changes).to.deep.equal({ dailySendCap: { from: 5000, to: 7000 } });
  });

  it('when the retention or the provider send rate is set or unset, then each shows before and after (unset: null)', () => {
    const base = { dailySendCap: 1000, emailProvider: 'sandbox', tracking: 'service' };
    const set = event('SettingsChanged', { accountId: 'a1', settings: { ...base, providerRatePerSecond: 14, retentionDays: 30 } });
    expect(given(created).when(set)?.changes).to.deep.equal({
      providerRatePerSecond: { from: null, to: 14 },
      retentionDays: { from: null, to: 30 },
    });
    const unset = event('SettingsChanged', { accountId: 'a1', settings: { ...base, providerRatePerSecond: null } });
    expect(given(created, set).when(unset)?.changes).to.deep.equal({
      providerRatePerSecond: { from: 14, to: null },
      retentionDays: { from: 30, to: null },
    });
  });

  it('when the SMS settings change, then each changed SMS field under sms.', () => {
    const entry = given(created).when(
      event('SmsSettingsChanged', { accountId: 'a1', sms: { enabled: true, originationNumber: '+14155550100', sandbox: true, sandboxDestinations: [] } }),
    );
    expect(entry?.action).to.equal('sms_settings.changed');
    expect(entry?.changes).to.deep.equal({ 'sms.enabled': { from: false, to: true }, 'sms.originationNumber': { from: null, to: '+14155550100' } });
  });

  it('given an API key created, when it is revoked: the account comes from the creation, the revocation shows revokedAt', () => {
    const keyCreated = event('ApiKeyCreated', {
      id: 'k1',
      accountId: 'a1',
      name: 'ci',
      keyHash: 'f'.repeat(64),
      prefix: 'cl_abcdef',
      scopes: ['send'],
      expiresAt: null,
      ipAllowlist: [],
      dailyLimit: null,
      createdAt: at.toISOString(),
      createdBy: 'user:u1',
    });
    const entry = given().when(keyCreated);
    expect(entry).to.include({ action: 'api_key.created', accountId: 'a1' });
    expect(entry?.target).to.deep.equal({ type: 'api_key', id: 'k1' });
    expect(entry?.changes).to.include.keys('name', 'scopes', 'prefix');
    expect(JSON.stringify(entry)).not.to.include('f'.repeat(64));
    const revoked = given(keyCreated).when(event('ApiKeyRevoked', { id: 'k1', revokedAt: at.toISOString(), revokedBy: 'user:u1' }));
    expect(revoked).to.include({ action: 'api_key.revoked', accountId: 'a1' });
    expect(revoked?.changes).to.deep.equal({ revokedAt: { from: null, to: at.toISOString() } });
  });

  it('given a webhook, when its url changes and it is deleted, then the url before and after, never the secret', () => {
    const subscribed = event('WebhookSubscribed', { id: 'w1', accountId: 'a1', url: 'https://a.example/h', events: ['contact.bounced'], secret: 'whsec_s3cret', createdAt: at.toISOString() });
    expect(JSON.stringify(given().when(subscribed))).not.to.include('whsec_s3cret');
    const changed = event('WebhookChanged', { id: 'w1', accountId: 'a1', url: 'https://b.example/h', changedAt: at.toISOString() });
    expect(given(subscribed).when(changed)?.changes).to.deep.equal({ url: { from: 'https://a.example/h', to: 'https://b.example/h' } });
    const removed = given(subscribed, changed).when(event('WebhookRemoved', { id: 'w1', accountId: 'a1', removedAt: at.toISOString() }));
    expect(removed?.action).to.equal('webhook.deleted');
    expect(removed?.changes).to.deep.equal({ url: { from: 'https://b.example/h', to: null }, events: { from: ['contact.bounced'], to: null } });
  });

  it('given a domain added, when it is checked, then domain.checked with the checks that changed and verified', () => {
    const checks = { dkim: 'pending', spf: 'pending', mailFrom: 'pending', dnsRecords: [] };
    const added = event('IdentityAdded', { id: 'i1', accountId: 'a1', kind: 'domain', value: 'mail.example.com', createdAt: at.toISOString(), ...checks });
    expect(given().when(added)).to.deep.include({ action: 'domain.added', target: { type: 'domain', id: 'i1' } });
    const verified = { dkim: 'verified', spf: 'verified', mailFrom: 'verified', dnsRecords: [] };
    const entry = given(added).when(event('IdentityChecked', { id: 'i1', accountId: 'a1', checkedAt: at.toISOString(), ...verified }));
    expect(entry?.action).to.equal('domain.checked');
    expect(entry?.changes).to.deep.equal({
      dkim: { from: 'pending', to: 'verified' },
      spf: { from: 'pending', to: 'verified' },
      mailFrom: { from: 'pending', to: 'verified' },
      verified: { from: false, to: true },
    });
    const sender = event('IdentityAdded', { id: 'i2', accountId: 'a1', kind: 'email', value: 'me@example.com', createdAt: at.toISOString(), ...checks });
    expect(given().when(sender)?.action).to.equal('sender.added');
  });

  it('given a domain added, when a check finds other DNS records to publish (another provider), then the records before and after', () => {
    const before = [{ type: 'CNAME', name: 'a._domainkey.mail.example.com', value: 'a.dkim.amazonses.com' }];
    const after = [{ type: 'TXT', name: 'pm._domainkey.mail.example.com', value: 'k=rsa; p=MIGf' }];
    const added = event('IdentityAdded', { id: 'i1', accountId: 'a1', kind: 'domain', value: 'mail.example.com', createdAt: at.toISOString(), dkim: 'verified', spf: 'verified', mailFrom: 'verified', dnsRecords: before });
    expect(given().when(added)?.changes.dnsRecords).to.deep.equal({ from: null, to: before });
    const checked = event('IdentityChecked', { id: 'i1', accountId: 'a1', checkedAt: at.toISOString(), dkim: 'pending', spf: 'verified', mailFrom: 'verified', dnsRecords: after });
    expect(given(added).when(checked)?.changes).to.deep.equal({
      dkim: { from: 'verified', to: 'pending' },
      verified: { from: true, to: false },
      dnsRecords: { from: before, to: after },
    });
  });

  it('a suppression an admin added is listed; one a bounce caused is not', () => {
    const manual = { accountId: 'a1', value: 'x@example.org', kind: 'email', reason: 'manual', source: 'manual', messageId: null, campaignId: null, detail: 'asked by phone', occurredAt: at.toISOString() };
    expect(given().when(event('AddressSuppressed', manual))).to.deep.include({ action: 'suppression.added', target: { type: 'suppression', id: 'x@example.org' } });
    expect(given().when(event('AddressSuppressed', { ...manual, reason: 'bounced', source: 'bounce' }, { actor: 'provider' }))).to.equal(null);
    expect(given().when(event('SuppressionLifted', { accountId: 'a1', value: 'x@example.org', kind: 'email', liftedAt: at.toISOString(), by: 'user:u1' }))?.action).to.equal(
      'suppression.removed',
    );
  });

  it("an import of suppressions is one suppressions.imported on the account with the entries it brought, not one per entry; an export is suppressions.exported", () => {
    const imported = { accountId: 'a1', value: 'x@example.org', kind: 'email', reason: 'bounced', source: 'import', messageId: null, campaignId: null, detail: null, occurredAt: at.toISOString() };
    expect(given().when(event('AddressSuppressed', imported, { ...byUser, person: 'hash-of-x' }))).to.equal(null);
    expect(given().when(event('SuppressionListImported', { importId: 'i1', accountId: 'a1', entries: 250, importedAt: at.toISOString() }))).to.deep.include({
      action: 'suppressions.imported',
      target: { type: 'account', id: 'a1' },
      changes: { entries: { from: null, to: 250 } },
    });
    expect(given().when(event('SuppressionListExported', { exportId: 'e1', accountId: 'a1', entries: 3, exportedAt: at.toISOString() }))).to.deep.equal({
      accountId: 'a1',
      at: at.toISOString(),
      actor: { type: 'user', id: 'u1' },
      ip: '203.0.113.7',
      action: 'suppressions.exported',
      target: { type: 'account', id: 'a1' },
      changes: { entries: { from: null, to: 3 } },
    });
  });

  it('a sign-in is user.signed_in on the user, from the address it came from', () => {
    const entry = given().when(event('UserSignedIn', { userId: 'u1', accountId: 'a1', signedInAt: at.toISOString() }));
    expect(entry).to.deep.include({ action: 'user.signed_in', actor: { type: 'user', id: 'u1' }, ip: '203.0.113.7', target: { type: 'user', id: 'u1' }, changes: {} });
  });

  it('an event before client addresses were recorded has ip null; the actor of an API key and of the service', () => {
    expect(given().when(event('UserSignedIn', { userId: 'u1', accountId: 'a1' }, { actor: 'user:u1' }))?.ip).to.equal(null);
    expect(auditActor('apikey:k9')).to.deep.equal({ type: 'apiKey', id: 'k9' });
    expect(auditActor('cli')).to.deep.equal({ type: 'system', id: 'cli' });
    expect(auditActor(undefined)).to.deep.equal({ type: 'system', id: 'system' });
  });

  it('message events are no admin actions: the trail does not follow them', () => {
    expect(AUDITED_EVENT_TYPES).not.to.include('EmailQueued');
    expect(auditEvent(event('EmailQueued', { accountId: 'a1' }), null)).to.equal(null);
  });

  it('a webhook secret read is webhook.secret_revealed on the webhook, with no changes (the event holds no secret)', () => {
    const entry = given().when(event('WebhookSecretRevealed', { id: 'w1', accountId: 'a1', revealedAt: at.toISOString() }));
    expect(entry).to.deep.include({ action: 'webhook.secret_revealed', ip: '203.0.113.7', target: { type: 'webhook', id: 'w1' }, changes: {} });
  });

  it("a contact upsert names the person by keyed hash and shows none of the contact's fields", () => {
    const data = { contactId: 'c1', accountId: 'a1', email: 'ada@example.org', created: true, fields: { firstName: 'Ada' }, at: at.toISOString() };
    const entry = given().when(event('ContactUpserted', data, { ...byUser, person: 'hash-of-ada' }));
    expect(entry).to.deep.include({ action: 'contact.created', target: { type: 'contact', id: 'hash-of-ada' }, changes: {} });
    expect(given().when(event('ContactUpserted', { ...data, created: false }, { ...byUser, person: 'hash-of-ada' }))?.action).to.equal('contact.updated');
  });

  it("given a campaign created, its admin's schedule, pause, resume and cancel are listed with the campaign's account; the service's own pauses are not", () => {
    const campaign = event('CampaignCreated', { campaignId: 'k1', accountId: 'a1', name: 'Spring', templateId: 't1', fromEmail: 'app@example.com', audience: { listId: 'news' } });
    const history = given(campaign);
    expect(given().when(campaign)).to.deep.include({ action: 'campaign.created', target: { type: 'campaign', id: 'k1' } });
    expect(history.when(event('CampaignScheduled', { campaignId: 'k1', scheduledAt: 'later' }))).to.deep.include({
      accountId: 'a1',
      action: 'campaign.scheduled',
      changes: { scheduledAt: { from: null, to: 'later' } },
    });
    expect(history.when(event('CampaignPaused', { campaignId: 'k1', reason: 'manual' }))?.action).to.equal('campaign.paused');
    expect(history.when(event('CampaignPaused', { campaignId: 'k1', reason: 'failure_rate' }))).to.equal(null);
    expect(history.when(event('CampaignResumed', { campaignId: 'k1', auto: false }))?.action).to.equal('campaign.resumed');
    expect(history.when(event('CampaignResumed', { campaignId: 'k1', auto: true }))).to.equal(null);
    expect(history.when(event('CampaignCancelled', { campaignId: 'k1' }))?.accountId).to.equal('a1');
    expect(AUDITED_EVENT_TYPES).not.to.include('CampaignProgressed');
  });

  it('a campaign changed shows each changed field before and after; a deleted one is listed with its account', () => {
    const campaign = event('CampaignCreated', { campaignId: 'k1', accountId: 'a1', name: 'Spring', templateId: 't1', fromEmail: 'app@example.com', fromName: null, audience: { listId: 'news' } });
    const changed = event('CampaignChanged', { campaignId: 'k1', changes: { templateId: 't2', fromName: 'Acme' }, changedAt: 'T1' });
    expect(given(campaign).when(changed)).to.deep.include({
      accountId: 'a1',
      action: 'campaign.changed',
      changes: { templateId: { from: 't1', to: 't2' }, fromName: { from: null, to: 'Acme' } },
    });
    expect(given(campaign, changed).when(event('CampaignDeleted', { campaignId: 'k1', deletedAt: 'T2' }))).to.deep.include({ accountId: 'a1', action: 'campaign.deleted' });
  });

  it("a campaign's variables changed (alone, or with its name) are listed before and after", () => {
    const campaign = event('CampaignCreated', { campaignId: 'k1', accountId: 'a1', name: 'Spring', templateId: 't1', fromEmail: 'app@example.com', audience: {}, variables: { discount: '10%' } });
    expect(given(campaign).when(event('CampaignChanged', { campaignId: 'k1', changes: { variables: { discount: '90%' } }, changedAt: 'T1' }))?.changes).to.deep.equal({
      variables: { from: { discount: '10%' }, to: { discount: '90%' } },
    });
    expect(given(campaign).when(event('CampaignChanged', { campaignId: 'k1', changes: { name: 'Summer', variables: {} }, changedAt: 'T1' }))?.changes).to.deep.equal({
      name: { from: 'Spring', to: 'Summer' },
      variables: { from: { discount: '10%' }, to: {} },
    });
  });

  it("a webhook test and a delivery's retry are listed; a delivery the service schedules is not; a retry recorded before it named its account is not", () => {
    const scheduled = { deliveryId: 'd1', accountId: 'a1', subscriptionId: 'w1', body: '{}', orderingKey: 'w1', scheduledAt: at.toISOString() };
    expect(given().when(event('WebhookDeliveryScheduled', { ...scheduled, event: 'webhook.test' }))).to.deep.include({ action: 'webhook.tested', target: { type: 'webhook', id: 'w1' } });
    expect(given().when(event('WebhookDeliveryScheduled', { ...scheduled, event: 'contact.bounced' }, { actor: 'system:webhooks' }))).to.equal(null);
    expect(given().when(event('WebhookRetryRequested', { series: 2, by: 'user:u1', at: 't', deliveryId: 'd1', accountId: 'a1' }))).to.deep.include({
      action: 'webhook_delivery.retried',
      target: { type: 'webhook_delivery', id: 'd1' },
      changes: { series: { from: 1, to: 2 } },
    });
    expect(given().when(event('WebhookRetryRequested', { series: 2, by: 'user:u1', at: 't' }))).to.equal(null);
  });
});
