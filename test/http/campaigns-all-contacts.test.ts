import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually, readyToSend } from '../support/email-setup.js';

describe('campaigns: an audience with neither list nor tag is every contact of the account', function () {
  this.timeout(120_000);
  let app: TestApp;
  const api = (method: string, path: string, body?: unknown) => app.request(method, path, { token: app.adminToken, body });

  before(async () => {
    // steps of two: the seven contacts are walked over several pages
    app = await startTestApp({ CAMPAIGN_STEP_SIZE: '2', CAMPAIGN_TIMER_INTERVAL_MS: '200' });
  });
  after(async () => app?.close());

  it('reaches every subscribed, unsuppressed contact once, whatever their lists and tags; the rest are skipped', async () => {
    const { from } = await readyToSend(app);
    const reached = ['plain@example.org', 'listed@example.org', 'tagged@example.org', 'both@example.org'];
    await api('POST', '/api/contacts', { email: 'plain@example.org' });
    await api('POST', '/api/contacts', { email: 'listed@example.org', listIds: ['news'] });
    await api('POST', '/api/contacts', { email: 'tagged@example.org', tags: ['vip'] });
    await api('POST', '/api/contacts', { email: 'both@example.org', listIds: ['news', 'other'], tags: ['vip'] });
    await api('POST', '/api/contacts', { email: 'left@example.org', status: 'unsubscribed' });
    await api('POST', '/api/contacts', { email: 'bounced@example.org', listIds: ['news'], status: 'bounced' });
    await api('POST', '/api/contacts', { email: 'suppressed@example.org', tags: ['vip'] });
    expect((await api('POST', '/api/suppressions', { email: 'suppressed@example.org' })).status).to.equal(201);
    // another account's contact is no contact of this one
    const other = await app.request('POST', '/api/auth/signup', { body: { accountName: 'other', email: 'o@other.test', password: 'a-long-password-1' } });
    expect((await app.request('POST', '/api/contacts', { token: other.body.token, body: { email: 'stranger@example.org' } })).status).to.be.oneOf([200, 201]);

    const t = await api('POST', '/api/templates', { name: 'all', subject: 'Hi {{email}}', html: '<p>hi</p>', text: 'hi' });
    const created = await api('POST', '/api/campaigns', { name: 'Everyone', templateId: t.body.id, fromEmail: from, audience: {} });
    expect(created.status).to.equal(201);
    expect(created.body.audience).to.deep.equal({});
    expect((await api('GET', `/api/campaigns/${created.body.id}`)).body.audience).to.deep.equal({});
    // a list chosen and then taken back: the draft is for everyone again
    expect((await api('PATCH', `/api/campaigns/${created.body.id}`, { audience: { listId: 'news' } })).body.audience).to.deep.equal({ listId: 'news' });
    expect((await api('PATCH', `/api/campaigns/${created.body.id}`, { audience: {} })).body.audience).to.deep.equal({});

    expect((await api('POST', `/api/campaigns/${created.body.id}/send`, {})).status).to.equal(202);
    const done = await eventually(() => api('GET', `/api/campaigns/${created.body.id}`), (r) => r.body.status === 'sent', 30_000);
    expect(done.body.audience).to.deep.equal({});
    expect(done.body.progress).to.deep.include({ audience: 7, queued: 4, skipped: 3 });
    const listed = (await api('GET', '/api/campaigns')).body.items.find((c: { id: string }) => c.id === created.body.id);
    expect(listed.audience).to.deep.equal({});

    const rows = await app.infra.db('messages').where({ campaign_id: created.body.id }).select('to_address');
    expect(rows.map((r) => r.to_address).sort()).to.deep.equal([...reached].sort());
  });
});
