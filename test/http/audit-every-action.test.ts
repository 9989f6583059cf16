import { expect } from 'chai';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestApp, type TestApp } from '../support/app.js';
import { eventually } from '../support/email-setup.js';

/**
 * The API's state-changing operations that are no admin action, each with why: everything else that
 * is not a GET must show in the audit trail (the last test checks the list against /openapi.json).
 */
const NOT_ADMIN_ACTIONS: Record<string, string> = {
  'POST /api/send/transactional': 'a send, followed in /api/messages',
  'POST /api/send/batch': 'a send, followed in /api/messages',
  'POST /api/send/sms': 'a send, followed in /api/messages',
  'POST /api/messages/{id}/cancel': 'a send cancelled, on the message timeline',
  'POST /api/templates/{id}/test': 'a send, followed in /api/messages (its actor is the user)',
  'POST /api/provider-events/ses': "a provider's report",
  'POST /api/provider-events/postmark': "a provider's report",
  'POST /api/sms/sync-optouts': "the provider's opt-outs, recorded as suppressions of source sms_optout",
  'POST /api/sandbox/sms/opt-outs': "a recipient's STOP simulated at the sandbox provider; its sync records the suppressions",
  'POST /api/auth/login': 'the sign-in tested here through POST /api/auth/session (both record user.signed_in)',
  'POST /u/{token}': "a recipient's unsubscribe",
};

describe('audit trail: every admin action over HTTP, with its actor and client address', function () {
  this.timeout(120_000);
  let app: TestApp;
  /** what each call was expected to record, by the address it came from */
  const expected: { action: string; ip: string; actor: 'user' | 'apiKey' | 'system'; operation: string }[] = [];
  const covered = new Set<string>();
  let n = 0;
  let signupIp = '';

  /** One call from an address of its own (the test client is a trusted proxy), remembered with what it should record. */
  async function act(operation: string, path: string, action: string | string[], options: { body?: unknown; apiKey?: string; token?: string | null; status?: number } = {}) {
    const ip = `203.0.113.${++n}`;
    const [method] = operation.split(' ');
    const auth = options.apiKey ? { apiKey: options.apiKey } : options.token === null ? {} : { token: options.token ?? app.adminToken };
    const res = await app.request(method, path, { ...auth, body: options.body, headers: { 'x-forwarded-for': ip } });
    expect(res.status, `${operation}: ${JSON.stringify(res.body)}`).to.equal(options.status ?? (method === 'POST' ? 201 : 200));
    covered.add(operation);
    for (const a of [action].flat()) expected.push({ action: a, ip, actor: options.apiKey ? 'apiKey' : 'user', operation });
    return res.body;
  }

  before(async () => {
    app = await startTestApp({ ALLOW_SIGNUP: 'true' });
  });
  after(async () => app?.close());

  it('lists each admin action with who, from where and when', async () => {
    await act('PATCH /api/settings', '/api/settings', 'settings.changed', { body: { dailySendCap: 2500 }, status: 200 });
    await act('PUT /api/settings/sms', '/api/settings/sms', 'sms_settings.changed', { body: { enabled: false, originationNumber: null, sandbox: true, sandboxDestinations: ['+14155550100'] }, status: 200 });
    const key = await act('POST /api/api-keys', '/api/api-keys', 'api_key.created', { body: { name: 'crm', scopes: ['contacts:read', 'contacts:write'] } });
    const domain = await act('POST /api/domains', '/api/domains', 'domain.added', { body: { domain: 'audit-every.example.com' } });
    await act('POST /api/domains/{id}/verify', `/api/domains/${domain.id}/verify`, 'domain.checked', { status: 200 });
    const sender = await act('POST /api/senders', '/api/senders', 'sender.added', { body: { email: 'me@elsewhere.example.net' } });
    await act('POST /api/senders/{id}/verify', `/api/senders/${sender.id}/verify`, 'sender.checked', { status: 200 });
    await act('DELETE /api/senders/{id}', `/api/senders/${sender.id}`, 'sender.removed', { status: 204 });
    const spare = await act('POST /api/domains', '/api/domains', 'domain.added', { body: { domain: 'spare.audit-every.example.com' } });
    await act('DELETE /api/domains/{id}', `/api/domains/${spare.id}`, 'domain.removed', { status: 204 });

    const hook = await act('POST /api/webhooks', '/api/webhooks', 'webhook.created', { body: { url: 'http://127.0.0.1:9/hook' } });
    await act('PATCH /api/webhooks/{id}', `/api/webhooks/${hook.id}`, 'webhook.changed', { body: { events: ['contact.bounced'] }, status: 200 });
    const revealed = await act('POST /api/webhooks/{id}/reveal-secret', `/api/webhooks/${hook.id}/reveal-secret`, 'webhook.secret_revealed', { status: 200 });
    expect(revealed).to.deep.equal({ id: hook.id, secret: hook.secret });
    await act('POST /api/webhooks/{id}/rotate-secret', `/api/webhooks/${hook.id}/rotate-secret`, 'webhook.secret_rotated', { body: {}, status: 200 });
    // nothing listens on port 9: the test fails, and a failed delivery can be retried
    await act('POST /api/webhooks/{id}/test', `/api/webhooks/${hook.id}/test`, 'webhook.tested', { status: 200 });
    const deliveries = await app.request('GET', `/api/webhooks/${hook.id}/deliveries`, { token: app.adminToken });
    await act('POST /api/webhook-deliveries/{id}/retry', `/api/webhook-deliveries/${deliveries.body.items[0].id}/retry`, 'webhook_delivery.retried', { status: 200 });

    const template = await act('POST /api/templates', '/api/templates', 'template.created', { body: { name: 'audit', subject: 's', html: '<p>h</p>', text: 't' } });
    await act('PUT /api/templates/{id}', `/api/templates/${template.id}`, 'template.updated', { body: { subject: 's2' }, status: 200 });

    const draft = { name: 'Audit', templateId: template.id, fromEmail: 'app@audit-every.example.com', audience: { listId: 'nobody' } };
    const paused = await act('POST /api/campaigns', '/api/campaigns', 'campaign.created', { body: draft });
    const later = new Date(Date.now() + 3_600_000).toISOString();
    await act('POST /api/campaigns/{id}/send', `/api/campaigns/${paused.id}/send`, 'campaign.scheduled', { body: { scheduledAt: later }, status: 202 });
    await act('POST /api/campaigns/{id}/pause', `/api/campaigns/${paused.id}/pause`, 'campaign.paused', { status: 200 });
    await act('POST /api/campaigns/{id}/resume', `/api/campaigns/${paused.id}/resume`, 'campaign.resumed', { status: 200 });
    // a campaign of nobody that resumes may be sent at once: the one cancelled stays scheduled until then
    const scheduled = (await app.request('POST', '/api/campaigns', { token: app.adminToken, body: draft })).body;
    await app.request('POST', `/api/campaigns/${scheduled.id}/send`, { token: app.adminToken, body: { scheduledAt: later } });
    await act('POST /api/campaigns/{id}/cancel', `/api/campaigns/${scheduled.id}/cancel`, 'campaign.cancelled', { status: 200 });
    const thrownAway = (await app.request('POST', '/api/campaigns', { token: app.adminToken, body: draft })).body;
    await act('PATCH /api/campaigns/{id}', `/api/campaigns/${thrownAway.id}`, 'campaign.changed', { body: { name: 'Renamed' }, status: 200 });
    await act('DELETE /api/campaigns/{id}', `/api/campaigns/${thrownAway.id}`, 'campaign.deleted', { status: 204 });
    await act('DELETE /api/templates/{id}', `/api/templates/${template.id}`, 'template.deleted');

    // contacts by an API key and by the dashboard
    const crm = { apiKey: key.key as string };
    await act('POST /api/contacts', '/api/contacts', 'contact.created', { ...crm, body: { email: 'ada@example.org', firstName: 'Ada' } });
    await act('POST /api/contacts/import', '/api/contacts/import', ['contact.updated', 'contact.created'], {
      body: { contacts: [{ email: 'ada@example.org', firstName: 'Augusta' }, { email: 'alan@example.org' }] },
      status: 200,
    });
    await act('POST /api/contacts/{email}/export', '/api/contacts/ada@example.org/export', 'contact.exported', { status: 200 });
    await act('DELETE /api/contacts/{email}', '/api/contacts/ada@example.org?erase=true', 'contact.erased', { ...crm });
    await act('POST /api/suppressions', '/api/suppressions', 'suppression.added', { body: { email: 'gone@example.org' } });
    await act('DELETE /api/suppressions/{value}', '/api/suppressions/gone@example.org', 'suppression.removed');
    await act('POST /api/suppressions/import', '/api/suppressions/import', 'suppressions.imported', { body: { entries: [{ email: 'old@example.org', reason: 'bounced' }] }, status: 200 });
    await act('POST /api/suppressions/export', '/api/suppressions/export', 'suppressions.exported', { status: 200 });
    await act('DELETE /api/webhooks/{id}', `/api/webhooks/${hook.id}`, 'webhook.deleted');
    await act('DELETE /api/api-keys/{id}', `/api/api-keys/${key.id}`, 'api_key.revoked');

    await act('POST /api/auth/session', '/api/auth/session', 'user.signed_in', { token: null, body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD }, status: 200 });
    // a session of its own to end: the admin's goes on
    const { token: ending } = (await app.request('POST', '/api/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } })).body;
    await act('DELETE /api/auth/session', '/api/auth/session', 'user.signed_out', { token: ending, status: 204 });
    signupIp = `203.0.113.${n + 1}`;
    await act('POST /api/auth/signup', '/api/auth/signup', [], { token: null, body: { accountName: 'Elsewhere', email: 'owner@audit-every.example', password: 'a-long-password-2' } });
    // last: the change ends the admin's earlier sessions, its own new token reads the trail
    const { token } = await act('POST /api/auth/password', '/api/auth/password', 'user.password_changed', {
      body: { currentPassword: ADMIN_PASSWORD, newPassword: 'audit-every-password' },
      status: 200,
    });

    const res = await eventually(
      () => app.request('GET', '/api/audit?limit=100', { token }),
      (r) => r.status === 200 && r.body.items.some((i: any) => i.action === 'user.signed_in' && i.ip === expected.find((e) => e.action === 'user.signed_in')!.ip),
    );
    const items: any[] = res.body.items;
    for (const e of expected) {
      const entry = items.find((i) => i.action === e.action && i.ip === e.ip);
      expect(entry, `${e.operation} → ${e.action} from ${e.ip}`).to.not.equal(undefined);
      expect(entry.actor.type, e.operation).to.equal(e.actor);
      expect(entry.actor.id, e.operation).to.be.a('string').and.not.equal('');
      if (e.actor === 'user') expect(entry.actor.email, e.operation).to.equal(ADMIN_EMAIL);
      if (e.actor === 'apiKey') expect(entry.actor.id, e.operation).to.equal(key.id);
      expect(Date.parse(entry.at), e.operation).to.be.closeTo(Date.now(), 120_000);
    }
    // neither secret nor address is in the trail: contacts are named by keyed hash
    const text = JSON.stringify(items);
    for (const secret of [hook.secret, key.key, 'ada@example.org', 'alan@example.org', 'Augusta']) expect(text).not.to.include(secret);
    const people = new Set(items.filter((i) => i.target.type === 'contact').map((i) => i.target.id));
    expect(people.size).to.equal(2);
    for (const person of people) expect(person).to.match(/^[\w-]{40,}$/);
  });

  it("records a sign-up's account and owner with the address it came from", async () => {
    const ip = signupIp;
    const login = await app.request('POST', '/api/auth/login', { body: { email: 'owner@audit-every.example', password: 'a-long-password-2' } });
    const theirs = await eventually(
      () => app.request('GET', '/api/audit?limit=100', { token: login.body.token }),
      (r) => r.status === 200 && r.body.items.some((i: any) => i.action === 'account.created'),
    );
    for (const action of ['account.created', 'user.created']) expect(theirs.body.items.find((i: any) => i.action === action)).to.deep.include({ ip, actor: { type: 'system', id: 'system' } });
  });

  it('covers every state-changing operation of the API that is an admin action', async () => {
    const spec = await (await fetch(`${app.baseUrl}/openapi.json`)).json();
    const operations = Object.entries(spec.paths as Record<string, Record<string, unknown>>).flatMap(([path, methods]) =>
      Object.keys(methods)
        .filter((m) => ['post', 'put', 'patch', 'delete'].includes(m))
        .map((m) => `${m.toUpperCase()} ${path}`),
    );
    const missing = operations.filter((o) => !covered.has(o) && !NOT_ADMIN_ACTIONS[o]);
    expect(missing).to.deep.equal([]);
  });
});
