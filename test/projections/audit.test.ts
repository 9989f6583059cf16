import { expect } from 'chai';
import { auditProjection } from '../../src/projections/audit.js';
import { projectionSpec } from '../support/projection-spec.js';

const settings = { dailySendCap: 1000, emailProvider: 'sandbox', tracking: 'service' };
const sms = { enabled: false, originationNumber: null, sandbox: true, sandboxDestinations: [] };
const byOwner = { actor: 'user:u1', clientIp: '203.0.113.7' };

describe('audit projection (given events, then rows)', function () {
  this.timeout(30_000);
  let spec: Awaited<ReturnType<typeof projectionSpec>>;
  beforeEach(async () => {
    spec = await projectionSpec(auditProjection, { recordedAt: (p) => new Date(Date.UTC(2026, 2, 1, 0, 0, Number(p))) });
  });
  afterEach(async () => spec?.drop());

  const entries = () => spec.rows('audit_entries').orderBy('seq').select('account_id', 'actor_type', 'actor_id', 'ip', 'action', 'target_type', 'target_id', 'changes');

  it('given an account, its owner and two settings changes in separate batches, then one row per admin action, each change from the value before', async () => {
    await spec.given(
      ['account-a1', [{ type: 'AccountCreated', data: { accountId: 'a1', name: 'Acme', createdAt: '2026-03-01T00:00:00Z', settings, sms }, metadata: { actor: 'system' } }]],
      ['user-owner@example.com', [{ type: 'UserRegistered', data: { userId: 'u1', accountId: 'a1', email: 'owner@example.com', passwordHash: 'scrypt$x', role: 'owner', createdAt: '2026-03-01T00:00:00Z' }, metadata: { actor: 'system' } }]],
    );
    await spec.given(['account-a1', [{ type: 'SettingsChanged', data: { accountId: 'a1', settings: { ...settings, dailySendCap: 5000 } }, metadata: byOwner }]]);
    await spec.given(['account-a1', [{ type: 'SettingsChanged', data: { accountId: 'a1', settings: { ...settings, dailySendCap: 5000, tracking: 'none' } }, metadata: byOwner }]]);

    const rows = await entries();
    expect(rows.map((r) => r.action)).to.deep.equal(['account.created', 'user.created', 'settings.changed', 'settings.changed']);
    expect(rows[2]).to.deep.equal({
      account_id: 'a1',
      actor_type: 'user',
      actor_id: 'u1',
      ip: '203.0.113.7',
      action: 'settings.changed',
      target_type: 'account',
      target_id: 'a1',
      changes: { dailySendCap: { from: 1000, to: 5000 } },
    });
    expect(rows[3].changes).to.deep.equal({ tracking: { from: 'service', to: 'none' } });
    // the acting user's email is what the trail remembers of user u1
    expect(await spec.rows('audit_targets').where({ key: 'user:u1' }).first()).to.deep.include({ account_id: 'a1', fields: { email: 'owner@example.com', role: 'owner' } });
    // the hash of a password is no field of the trail
    expect(JSON.stringify(await spec.rows('audit_entries'))).not.to.include('scrypt$x');
  });

  it('given an API key created in one batch and revoked in another, then the revocation belongs to the key\'s account', async () => {
    const key = { id: 'k1', accountId: 'a2', name: 'ci', keyHash: 'h', prefix: 'cl_abc', scopes: ['send'], expiresAt: null, ipAllowlist: [], dailyLimit: null, createdAt: '2026-03-01T00:00:00Z', createdBy: 'user:u2' };
    await spec.given(['apikey-k1', [{ type: 'ApiKeyCreated', data: key, metadata: { actor: 'user:u2', clientIp: '198.51.100.1' } }]]);
    await spec.given(['apikey-k1', [{ type: 'ApiKeyRevoked', data: { id: 'k1', revokedAt: '2026-03-02T00:00:00Z', revokedBy: 'user:u2' }, metadata: { actor: 'user:u2', clientIp: '198.51.100.2' } }]]);
    const rows = await entries();
    expect(rows.map((r) => [r.account_id, r.action, r.ip])).to.deep.equal([
      ['a2', 'api_key.created', '198.51.100.1'],
      ['a2', 'api_key.revoked', '198.51.100.2'],
    ]);
    expect(rows[1].changes).to.deep.equal({ revokedAt: { from: null, to: '2026-03-02T00:00:00Z' } });
  });

  it('given a webhook subscribed and removed, then two rows and nothing remembered of it; a bounce and a message leave no row', async () => {
    await spec.given(
      ['webhook-w1', [{ type: 'WebhookSubscribed', data: { id: 'w1', accountId: 'a1', url: 'https://h.example/x', events: ['contact.bounced'], secret: 'whsec_x', createdAt: '2026-03-01T00:00:00Z' }, metadata: byOwner }]],
      ['webhook-w1', [{ type: 'WebhookRemoved', data: { id: 'w1', accountId: 'a1', removedAt: '2026-03-01T00:01:00Z' }, metadata: byOwner }]],
      [
        'suppression-a1-x@example.org',
        [{ type: 'AddressSuppressed', data: { accountId: 'a1', value: 'x@example.org', kind: 'email', reason: 'bounced', source: 'bounce', messageId: 'm1', campaignId: null, detail: null, occurredAt: '2026-03-01T00:00:00Z' }, metadata: { actor: 'provider' } }],
      ],
      ['message-m1', [{ type: 'EmailQueued', data: { messageId: 'm1', accountId: 'a1' }, metadata: { actor: 'apikey:k1' } }]],
    );
    expect((await entries()).map((r) => r.action)).to.deep.equal(['webhook.created', 'webhook.deleted']);
    expect(await spec.rows('audit_targets').where({ key: 'webhook:w1' })).to.have.length(0);
  });

  it("given a campaign created, then changes of its variables (alone, and with its name) are rows listing them before and after", async () => {
    const definition = { name: 'Spring', templateId: 't1', fromEmail: 'app@example.com', fromName: null, replyTo: null, audience: { listId: 'news' }, variables: { discount: '10%' } };
    await spec.given(['campaign-c1', [{ type: 'CampaignCreated', data: { ...definition, campaignId: 'c1', accountId: 'a1', createdBy: 'user:u1', createdAt: '2026-03-01T00:00:00Z' }, metadata: byOwner }]]);
    await spec.given(['campaign-c1', [{ type: 'CampaignChanged', data: { campaignId: 'c1', changes: { variables: { discount: '90%' } }, changedAt: '2026-03-01T00:01:00Z' }, metadata: byOwner }]]);
    await spec.given(['campaign-c1', [{ type: 'CampaignChanged', data: { campaignId: 'c1', changes: { name: 'Summer', variables: { discount: '90%', code: 'SUN' } }, changedAt: '2026-03-01T00:02:00Z' }, metadata: byOwner }]]);

    const rows = await entries();
    expect(rows.map((r) => r.action)).to.deep.equal(['campaign.created', 'campaign.changed', 'campaign.changed']);
    expect(rows[0].changes.variables).to.deep.equal({ from: null, to: { discount: '10%' } });
    expect(rows[1]).to.deep.include({ account_id: 'a1', target_id: 'c1', changes: { variables: { from: { discount: '10%' }, to: { discount: '90%' } } } });
    expect(rows[2].changes).to.deep.equal({
      name: { from: 'Spring', to: 'Summer' },
      variables: { from: { discount: '90%' }, to: { discount: '90%', code: 'SUN' } },
    });
  });
});
