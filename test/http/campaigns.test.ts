import { isDeepStrictEqual } from 'node:util';
import { expect } from 'chai';
import { queueDirect } from '../support/messages-http.js';
import { campaignMessageId } from '../../src/domain/campaigns/personalise.js';
import { createCampaignTurns } from '../../src/adapters/db/campaign-turns.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { expectError } from '../support/contacts-http.js';
import { eventually, readyToSend } from '../support/email-setup.js';
import { startScriptedReceiver, type ScriptedReceiver } from '../support/webhook-receiver.js';

/** What a campaign's messages went out as, from the sandbox provider's record, by recipient. */
async function deliveredByRecipient(app: TestApp, campaignId: string) {
  const rows = await app.infra.db('sandbox_emails as s').join('messages as m', 'm.id', 's.message_id').where('m.campaign_id', campaignId).select('s.*', 'm.id as message_id');
  return new Map(rows.map((r) => [r.to_address as string, r]));
}

describe('campaigns: create, send, fan-out, progress and stats', function () {
  this.timeout(120_000);
  let app: TestApp;
  let key: string;
  let from: string;
  let templateId: string;
  const token = () => app.adminToken;
  const api = (method: string, path: string, body?: unknown) => app.request(method, path, { token: token(), body });
  const create = (over: Record<string, unknown> = {}) =>
    api('POST', '/api/campaigns', { name: 'Spring', templateId, fromEmail: from, audience: { listId: 'news' }, variables: { offer: '20%' }, ...over });
  const finished = (id: string) =>
    eventually(() => api('GET', `/api/campaigns/${id}`), (r) => r.body.status === 'sent', 30_000).then((r) => r.body);
  const contact = (body: Record<string, unknown>) => app.request('POST', '/api/contacts', { token: token(), body });
  /** the campaign's messages in the log, which has them before any read model */
  const queuedInLog = (campaignId: string) =>
    app.infra.db('events').where({ type: 'EmailQueued' }).whereRaw("data->>'campaignId' = ?", [campaignId]).count({ n: '*' }).first().then((r) => Number(r!.n));

  before(async () => {
    app = await startTestApp({ CAMPAIGN_STEP_SIZE: '2', CAMPAIGN_TIMER_INTERVAL_MS: '200' });
    ({ key, from } = await readyToSend(app));
    const t = await api('POST', '/api/templates', {
      name: 'spring',
      subject: 'Hello {{firstName}}',
      html: '<p>{{firstName}} {{lastName}} of {{company}}: {{offer}} off for {{email}}</p>',
      text: '{{firstName}}: {{offer}} {{missing}}',
    });
    templateId = t.body.id;
  });
  after(async () => app?.close());

  it('creates a draft with the campaign shape; bad input is refused with the words of a send', async () => {
    const res = await create();
    expect(res.status).to.equal(201);
    expect(res.body).to.deep.include({ name: 'Spring', status: 'draft', templateId, fromEmail: from, audience: { listId: 'news' }, scheduledAt: null, startedAt: null, finishedAt: null });
    expect(res.body.progress).to.deep.equal({ audience: 0, queued: 0, skipped: 0, unfilledPlaceholders: 0 });
    expect(res.body.stats).to.deep.include({ total: 0 });
    expect((await api('GET', `/api/campaigns/${res.body.id}`)).body).to.deep.equal(res.body);
    expect((await api('GET', '/api/campaigns')).body.items.map((c: { id: string }) => c.id)).to.include(res.body.id);

    expectError(await create({ templateId: 'nosuchtemplate' }), 400, 'templateId nosuchtemplate not found');
    expectError(await create({ fromEmail: 'someone@unverified.test' }), 400, 'someone@unverified.test is not verified for sending');
    // {} is every contact (campaigns-all-contacts.test.ts); a filter given empty or unknown is refused
    for (const audience of [{ listId: '' }, { tag: '' }, { segment: 'vip' }]) expectError(await create({ audience }), 400, /audience/);
    expectError(await api('GET', '/api/campaigns/nope'), 404, 'campaign nope not found');
    const other = await app.request('POST', '/api/auth/signup', { body: { accountName: 'other', email: 'o@other.test', password: 'a-long-password-1' } });
    expect((await app.request('GET', `/api/campaigns/${res.body.id}`, { token: other.body.token })).status).to.equal(404);
    expect((await app.request('GET', '/api/campaigns', { apiKey: key })).status).to.be.oneOf([401, 403]);
  });

  it('sends once to each subscribed contact of the audience, skipping and counting the rest', async () => {
    await contact({ email: 'ada@example.org', firstName: 'Ada', lastName: 'Lovelace', company: 'Engines', listIds: ['news'] });
    await contact({ email: 'alan@example.org', firstName: 'Alan', listIds: ['news'] });
    await contact({ email: 'grace@example.org', listIds: ['news'], status: 'unsubscribed' });
    await contact({ email: 'barbara@example.org', listIds: ['news'], status: 'bounced' });
    await contact({ email: 'edsger@example.org', listIds: ['news'] });
    await contact({ email: 'outsider@example.org', listIds: ['other'] });
    expect((await api('POST', '/api/suppressions', { email: 'edsger@example.org' })).status).to.equal(201);

    const { body: c } = await create();
    const sent = await api('POST', `/api/campaigns/${c.id}/send`, {});
    expect(sent.status).to.equal(202);
    expect(sent.body.status).to.be.oneOf(['sending', 'sent']);
    const done = await finished(c.id);
    expect(done.progress).to.deep.equal({ audience: 5, queued: 2, skipped: 3, unfilledPlaceholders: 2 });
    expect(done.startedAt).to.be.a('string');
    expect(done.finishedAt).to.be.a('string');

    const delivered = await eventually(() => deliveredByRecipient(app, c.id), (m) => m.size === 2);
    expect([...delivered.keys()].sort()).to.deep.equal(['ada@example.org', 'alan@example.org']);
    const ada = delivered.get('ada@example.org')!;
    expect(ada.subject).to.equal('Hello Ada');
    expect(ada.html).to.contain('Ada Lovelace of Engines: 20% off for ada@example.org');
    expect(ada.text).to.equal('Ada: 20% ');
    const names = ada.headers.map((h: { name: string }) => h.name);
    expect(names).to.include.members(['List-Unsubscribe', 'List-Unsubscribe-Post']);
    expect(delivered.get('alan@example.org')!.html).to.contain('Alan  of : 20% off');

    // read together: the messages move on (queued, sent, ...) between two reads taken apart
    // (the campaign's and the list's stats are kept per campaign, the aggregate counts the messages)
    const listed = (list: any) => list.body.items.find((item: { id: string }) => item.id === c.id).stats;
    const [stats, aggregate, list] = await eventually(
      () => Promise.all([api('GET', `/api/campaigns/${c.id}`), api('GET', `/api/messages/aggregate?campaignId=${c.id}`), api('GET', '/api/campaigns')]),
      ([s, a, l]) => s.body.stats.total === 2 && isDeepStrictEqual(s.body.stats, a.body) && isDeepStrictEqual(listed(l), a.body),
    );
    expect(stats.body.stats).to.deep.equal(aggregate.body);
    expect(listed(list)).to.deep.equal(aggregate.body);

    // a read model from before the stats were kept (served while an upgrade rebuilds it): counted instead
    const db = app.infra.db;
    await db.raw('DROP VIEW campaign_stats');
    try {
      const [older] = await eventually(
        () => Promise.all([api('GET', `/api/campaigns/${c.id}`), api('GET', `/api/messages/aggregate?campaignId=${c.id}`), api('GET', '/api/campaigns')]),
        ([s, a, l]) => s.status === 200 && l.status === 200 && isDeepStrictEqual(s.body.stats, a.body) && isDeepStrictEqual(listed(l), a.body),
      );
      expect(older.body.stats.total).to.equal(2);
    } finally {
      await db.raw('CREATE VIEW campaign_stats AS SELECT * FROM campaign_stats_g1');
    }
  });

  it('a tag audience reaches the contacts with the tag, a list and a tag those with both; fromName and replyTo reach each message', async () => {
    await contact({ email: 'vip.news@example.org', tags: ['vip'], listIds: ['tagged'] });
    await contact({ email: 'vip.only@example.org', tags: ['vip'] });
    await contact({ email: 'news.only@example.org', listIds: ['tagged'] });
    const byTag = (await create({ audience: { tag: 'vip' }, fromName: 'Spring Team', replyTo: 'replies@example.org' })).body;
    const both = (await create({ audience: { listId: 'tagged', tag: 'vip' } })).body;
    for (const c of [byTag, both]) expect((await api('POST', `/api/campaigns/${c.id}/send`, {})).status).to.equal(202);
    expect((await finished(byTag.id)).progress).to.include({ audience: 2, queued: 2 });
    expect((await finished(both.id)).progress).to.include({ audience: 1, queued: 1 });
    const tagged = await eventually(() => deliveredByRecipient(app, byTag.id), (m) => m.size === 2);
    expect([...tagged.keys()].sort()).to.deep.equal(['vip.news@example.org', 'vip.only@example.org']);
    for (const row of tagged.values()) expect(row).to.include({ from_header: `Spring Team <${from}>`, reply_to: 'replies@example.org' });
    expect([...(await eventually(() => deliveredByRecipient(app, both.id), (m) => m.size === 1)).keys()]).to.deep.equal(['vip.news@example.org']);
  });

  it('/openapi.json documents every campaign route, with examples', async () => {
    const spec = (await app.request('GET', '/openapi.json')).body;
    for (const path of ['/api/campaigns', '/api/campaigns/{id}', '/api/campaigns/{id}/send', '/api/campaigns/{id}/pause', '/api/campaigns/{id}/resume', '/api/campaigns/{id}/cancel']) {
      expect(spec.paths, path).to.have.property(path);
    }
    expect(JSON.stringify(spec.paths['/api/campaigns'].post)).to.contain('Spring sale');
    expect(JSON.stringify(spec.paths['/api/campaigns/{id}'].get)).to.contain('unfilledPlaceholders');
  });

  it('a list with no contacts is a campaign of zero: it is sent at once', async () => {
    const { body: c } = await create({ audience: { listId: 'empty' } });
    expect((await api('POST', `/api/campaigns/${c.id}/send`)).status).to.equal(202);
    expect((await finished(c.id)).progress).to.deep.equal({ audience: 0, queued: 0, skipped: 0, unfilledPlaceholders: 0 });
  });

  it('state changes that make no sense are 409 with a clear message', async () => {
    const { body: draft } = await create({ audience: { listId: 'empty' } });
    expect((await api('POST', `/api/campaigns/${draft.id}/pause`)).body).to.deep.equal({ message: 'cannot pause a campaign that is draft', error: 'Conflict', statusCode: 409 });
    expect((await api('POST', `/api/campaigns/${draft.id}/resume`)).body.message).to.equal('cannot resume a campaign that is draft');
    await api('POST', `/api/campaigns/${draft.id}/send`);
    await finished(draft.id);
    expect((await api('POST', `/api/campaigns/${draft.id}/resume`)).body.message).to.equal('cannot resume a campaign that is sent');
    expect((await api('POST', `/api/campaigns/${draft.id}/cancel`)).status).to.equal(409);
    const { body: other } = await create();
    const cancelled = await api('POST', `/api/campaigns/${other.id}/cancel`);
    expect(cancelled.status).to.equal(200);
    expect(cancelled.body.status).to.equal('cancelled');
    expect((await api('POST', `/api/campaigns/${other.id}/send`)).body).to.deep.equal({ message: 'cannot send a campaign that is cancelled', error: 'Conflict', statusCode: 409 });
  });

  it('a draft is edited field by field with the checks of a create, and deleted; neither once it has been sent', async () => {
    const { body: draft } = await create({ audience: { listId: 'empty' } });
    const edited = await api('PATCH', `/api/campaigns/${draft.id}`, { name: 'Autumn', fromName: 'Acme', variables: { offer: '30%' }, audience: { tag: 'none-yet' } });
    expect(edited.status).to.equal(200);
    expect(edited.body).to.deep.include({ id: draft.id, name: 'Autumn', fromName: 'Acme', templateId, fromEmail: from, variables: { offer: '30%' }, audience: { tag: 'none-yet' }, status: 'draft' });
    expect((await api('PATCH', `/api/campaigns/${draft.id}`, { fromName: null })).body.fromName).to.equal(null);
    expectError(await api('PATCH', `/api/campaigns/${draft.id}`, { templateId: 'nosuchtemplate' }), 400, 'templateId nosuchtemplate not found');
    expectError(await api('PATCH', `/api/campaigns/${draft.id}`, { fromEmail: 'someone@unverified.test' }), 400, 'someone@unverified.test is not verified for sending');
    expectError(await api('PATCH', `/api/campaigns/${draft.id}`, { status: 'sent' }), 400, 'status: unknown field');
    expectError(await api('PATCH', '/api/campaigns/nope', { name: 'x' }), 404, 'campaign nope not found');

    expect((await api('DELETE', `/api/campaigns/${draft.id}`)).status).to.equal(204);
    expectError(await api('GET', `/api/campaigns/${draft.id}`), 404, `campaign ${draft.id} not found`);
    expect((await api('GET', '/api/campaigns')).body.items.map((c: { id: string }) => c.id)).not.to.include(draft.id);
    expect((await api('DELETE', `/api/campaigns/${draft.id}`)).status).to.equal(404);

    const { body: zero } = await create({ audience: { listId: 'empty' } });
    await api('POST', `/api/campaigns/${zero.id}/send`);
    await finished(zero.id);
    expectError(await api('PATCH', `/api/campaigns/${zero.id}`, { name: 'late' }), 409, 'cannot edit a campaign that is sent');
    expectError(await api('DELETE', `/api/campaigns/${zero.id}`), 409, 'cannot delete a campaign that is sent');
  });

  it('paused because its template was deleted, it is given another and resumed: everyone gets the new one, once; its audience stays', async () => {
    for (const email of ['fix1@example.org', 'fix2@example.org', 'fix3@example.org']) await contact({ email, firstName: 'Fix', listIds: ['fix'] });
    const doomed = await api('POST', '/api/templates', { name: 'doomed', subject: 'Old', html: '<p>old</p>', text: 'old' });
    const fresh = await api('POST', '/api/templates', { name: 'fresh', subject: 'New for {{firstName}}', html: '<p>new</p>', text: 'new' });
    const { body: c } = await create({ templateId: doomed.body.id, audience: { listId: 'fix' } });
    await api('POST', `/api/campaigns/${c.id}/send`, { scheduledAt: new Date(Date.now() + 700).toISOString() });
    await api('DELETE', `/api/templates/${doomed.body.id}`);
    await eventually(() => api('GET', `/api/campaigns/${c.id}`), (r) => r.body.pausedReason === 'template_deleted', 20_000);

    expectError(await api('PATCH', `/api/campaigns/${c.id}`, { audience: { listId: 'news' } }), 409, 'cannot change the audience of a campaign that has started');
    expect((await api('PATCH', `/api/campaigns/${c.id}`, { templateId: fresh.body.id })).body).to.deep.include({ status: 'paused', templateId: fresh.body.id });
    expect((await api('POST', `/api/campaigns/${c.id}/resume`)).status).to.equal(200);
    expect((await finished(c.id)).progress).to.include({ audience: 3, queued: 3 });
    // sent means every message is queued: each reaches the provider a moment later
    const sent = await eventually(() => deliveredByRecipient(app, c.id), (byRecipient) => byRecipient.size === 3, 20_000);
    expect([...sent.keys()].sort()).to.deep.equal(['fix1@example.org', 'fix2@example.org', 'fix3@example.org']);
    for (const row of sent.values()) expect(row.subject).to.equal('New for Fix');
  });

  it('a change the status refuses is 409 whatever its template or sender; a change checks only the template or sender it changes', async () => {
    const doomed = await api('POST', '/api/templates', { name: 'doomed-later', subject: 's', html: '<p>h</p>', text: 't' });
    const { body: c } = await create({ templateId: doomed.body.id, audience: { listId: 'statusfirst' } });
    expect((await api('POST', `/api/campaigns/${c.id}/cancel`)).status).to.equal(200);
    expect((await api('DELETE', `/api/templates/${doomed.body.id}`)).status).to.be.oneOf([200, 204]);
    expectError(await api('POST', `/api/campaigns/${c.id}/send`), 409, 'cannot send a campaign that is cancelled');
    expectError(await api('PATCH', `/api/campaigns/${c.id}`, { fromEmail: from }), 409, 'cannot edit a campaign that is cancelled');
    expectError(await api('PATCH', `/api/campaigns/${c.id}`, { fromEmail: 'x@not-verified.org' }), 409, 'cannot edit a campaign that is cancelled');

    // sending: a step under way holds it there for as long as this test needs
    await contact({ email: 'statusfirst@example.org', listIds: ['statusfirst-sending'] });
    const { body: sending } = await create({ audience: { listId: 'statusfirst-sending' } });
    await createCampaignTurns(app.infra.db).step(sending.id, async () => {
      expect((await api('POST', `/api/campaigns/${sending.id}/send`)).body.status).to.equal('sending');
      expectError(await api('PATCH', `/api/campaigns/${sending.id}`, { templateId: 'doesnotexist' }), 409, 'cannot edit a campaign that is sending');
      expectError(await api('PATCH', `/api/campaigns/${sending.id}`, { fromEmail: 'x@not-verified.org' }), 409, 'cannot edit a campaign that is sending');
    });
    await finished(sending.id);

    const gone = await api('POST', '/api/templates', { name: 'gone', subject: 's', html: '<p>h</p>', text: 't' });
    const { body: sent } = await create({ templateId: gone.body.id, audience: { listId: 'empty' } });
    await api('POST', `/api/campaigns/${sent.id}/send`);
    await finished(sent.id);
    expect((await api('DELETE', `/api/templates/${gone.body.id}`)).status).to.be.oneOf([200, 204]);
    expectError(await api('POST', `/api/campaigns/${sent.id}/send`), 409, 'cannot send a campaign that is sent');

    // paused for its deleted template: a new sender alone is checked, not the template it leaves alone
    await contact({ email: 'newsender@example.org', listIds: ['newsender'] });
    const lost = await api('POST', '/api/templates', { name: 'lost', subject: 's', html: '<p>h</p>', text: 't' });
    const { body: p } = await create({ templateId: lost.body.id, audience: { listId: 'newsender' } });
    await api('POST', `/api/campaigns/${p.id}/send`, { scheduledAt: new Date(Date.now() + 700).toISOString() });
    await api('DELETE', `/api/templates/${lost.body.id}`);
    await eventually(() => api('GET', `/api/campaigns/${p.id}`), (r) => r.body.pausedReason === 'template_deleted', 20_000);
    const other = `other@${from.split('@')[1]}`;
    const patched = await api('PATCH', `/api/campaigns/${p.id}`, { fromEmail: other });
    expect(patched.status, JSON.stringify(patched.body)).to.equal(200);
    expect(patched.body).to.deep.include({ status: 'paused', fromEmail: other });
    expectError(await api('PATCH', `/api/campaigns/${p.id}`, { fromEmail: 'x@not-verified.org' }), 400, 'x@not-verified.org is not verified for sending');
    // a resume checks nothing more: it pauses again for the template, which a PATCH mends
    expectError(await api('POST', `/api/campaigns/${p.id}/send`), 409, 'cannot send a campaign that is paused');
  });

  it('paused because its sender is no longer verified, it queues nobody; verified again and resumed, everyone once', async () => {
    for (const email of ['moved1@example.org', 'moved2@example.org']) await contact({ email, listIds: ['moved'] });
    const added = await api('POST', '/api/domains', { domain: 'moving.test' });
    expect(added.status).to.equal(201);
    const { body: c } = await create({ fromEmail: 'news@moving.test', audience: { listId: 'moved' } });
    await api('POST', `/api/campaigns/${c.id}/send`, { scheduledAt: new Date(Date.now() + 700).toISOString() });
    expect((await api('DELETE', `/api/domains/${added.body.id}`)).status).to.be.oneOf([200, 204]);
    const paused = await eventually(() => api('GET', `/api/campaigns/${c.id}`), (r) => r.body.pausedReason === 'sender_not_verified', 20_000);
    expect(paused.body.progress).to.include({ queued: 0 });

    expect((await api('POST', '/api/domains', { domain: 'moving.test' })).status).to.equal(201);
    expect((await api('POST', `/api/campaigns/${c.id}/resume`)).status).to.equal(200);
    expect((await finished(c.id)).progress).to.include({ audience: 2, queued: 2, skipped: 0 });
    const sent = await eventually(() => deliveredByRecipient(app, c.id), (byRecipient) => byRecipient.size === 2, 20_000);
    expect([...sent.keys()].sort()).to.deep.equal(['moved1@example.org', 'moved2@example.org']);
  });

  it('a scheduled campaign starts at its time; one paused before queues nothing until resumed', async () => {
    const { body: c } = await create({ audience: { listId: 'news' } });
    const at = new Date(Date.now() + 1_500).toISOString();
    const scheduled = await api('POST', `/api/campaigns/${c.id}/send`, { scheduledAt: at });
    expect(scheduled.status).to.equal(202);
    expect(scheduled.body).to.deep.include({ status: 'scheduled', scheduledAt: at });
    await finished(c.id);

    const { body: p } = await create();
    await api('POST', `/api/campaigns/${p.id}/send`, { scheduledAt: new Date(Date.now() + 500).toISOString() });
    expect((await api('POST', `/api/campaigns/${p.id}/pause`)).body).to.deep.include({ status: 'paused', pausedReason: 'manual' });
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await api('GET', `/api/campaigns/${p.id}`)).body).to.deep.include({ status: 'paused' });
    expect(Number((await app.infra.db('messages').where({ campaign_id: p.id }).count({ n: '*' }).first())!.n)).to.equal(0);
    expect((await api('POST', `/api/campaigns/${p.id}/resume`)).status).to.equal(200);
    expect((await finished(p.id)).progress).to.include({ queued: 2, skipped: 3 });

    // paused and resumed before its time, it waits for that time again: a resume is not a start
    const { body: r } = await create();
    const later = new Date(Date.now() + 3_000).toISOString();
    await api('POST', `/api/campaigns/${r.id}/send`, { scheduledAt: later });
    await api('POST', `/api/campaigns/${r.id}/pause`);
    const resumed = await api('POST', `/api/campaigns/${r.id}/resume`);
    expect(resumed.body).to.deep.include({ status: 'scheduled', scheduledAt: later, startedAt: null });
    await new Promise((res) => setTimeout(res, 1_000));
    expect(Number((await app.infra.db('messages').where({ campaign_id: r.id }).count({ n: '*' }).first())!.n)).to.equal(0);
    const done = await finished(r.id);
    expect(done.progress).to.include({ queued: 2, skipped: 3 });
    expect(Date.parse(done.startedAt)).to.be.at.least(Date.parse(later));
  });

  it('paused mid-fan-out it queues nothing after the answer; resumed, every contact gets exactly one message', async () => {
    const many = Array.from({ length: 200 }, (_, i) => ({ email: `bulk${i}@example.org`, firstName: `B${i}` }));
    expect((await app.request('POST', '/api/contacts/import', { token: token(), body: { contacts: many, listId: 'bulk' } })).status).to.equal(200);
    const { body: c } = await create({ audience: { listId: 'bulk' } });
    await api('POST', `/api/campaigns/${c.id}/send`);
    await new Promise((r) => setTimeout(r, 50)); // a step under way
    const paused = await api('POST', `/api/campaigns/${c.id}/pause`);
    expect(paused.body.status).to.equal('paused');
    // the step under way when it was asked ended before the answer, which counts what it queued
    const answered = paused.body.progress.queued;
    expect(await queuedInLog(c.id)).to.equal(answered);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await queuedInLog(c.id)).to.equal(answered);
    expect(answered).to.be.below(200);

    expect((await api('POST', `/api/campaigns/${c.id}/resume`)).body.status).to.be.oneOf(['sending', 'sent']);
    const done = await finished(c.id);
    expect(done.progress).to.deep.include({ audience: 200, queued: 200, skipped: 0 });
    // the messages read model follows the log on its own, a little behind the campaign's
    const perContact = await eventually(
      () => app.infra.db('messages').where({ campaign_id: c.id }).select('to_address').count({ n: '*' }).groupBy('to_address'),
      (rows) => rows.length >= 200,
    );
    expect(perContact).to.have.length(200);
    expect(perContact.every((r) => Number(r.n) === 1)).to.equal(true);
  });

  it('a contact an earlier run of a step queued counts as queued from the log, though the read model does not show it yet and the contact was suppressed since', async () => {
    const early = (await contact({ email: 'early@example.org', firstName: 'Early', listIds: ['redo'] })).body;
    await contact({ email: 'late@example.org', firstName: 'Late', listIds: ['redo'] });
    const { body: c } = await create({ audience: { listId: 'redo' } });
    const accountId = (await app.infra.db('accounts').where({ name: 'default' }).first('id')).id;
    // as a run that died after queueing it: in the log (held by a sender that never finishes), not in the read model
    const messageId = campaignMessageId(c.id, early.id);
    await queueDirect(app, { accountId, to: 'early@example.org', campaignId: c.id }, { heldBySender: true, messageId });
    await eventually(() => app.infra.db('messages').where({ id: messageId }).first(), Boolean);
    await app.infra.db('messages').where({ id: messageId }).delete();
    expect((await api('POST', '/api/suppressions', { email: 'early@example.org' })).status).to.equal(201);
    await api('POST', `/api/campaigns/${c.id}/send`);
    const done = await finished(c.id);
    expect(done.progress).to.deep.include({ audience: 2, queued: 2, skipped: 0 });
  });

  it('paused and resumed again and again mid-fan-out, every contact gets one message and takes one slot of the daily cap', async () => {
    const many = Array.from({ length: 120 }, (_, i) => ({ email: `flip${i}@example.org`, firstName: `F${i}` }));
    expect((await app.request('POST', '/api/contacts/import', { token: token(), body: { contacts: many, listId: 'flip' } })).status).to.equal(200);
    const slotsTaken = () => app.infra.db('send_counters').where('scope', 'like', 'account:%').sum({ n: 'count' }).first().then((r) => Number(r!.n));
    const before = await slotsTaken();
    const { body: c } = await create({ audience: { listId: 'flip' } });
    await api('POST', `/api/campaigns/${c.id}/send`);
    // each resume sets another run of the fan-out going while the one before may still be in a step
    for (let i = 0; i < 10; i++) {
      await api('POST', `/api/campaigns/${c.id}/pause`);
      await api('POST', `/api/campaigns/${c.id}/resume`);
    }
    const done = await finished(c.id);
    expect(done.progress).to.deep.include({ audience: 120, queued: 120, skipped: 0 });
    expect(await slotsTaken()).to.equal(before + 120);
  });

  it('cancelled while a step is under way, it answers once that step has ended, counting what it queued; nothing comes after', async () => {
    const many = Array.from({ length: 40 }, (_, i) => ({ email: `halt${i}@example.org`, firstName: `H${i}` }));
    expect((await app.request('POST', '/api/contacts/import', { token: token(), body: { contacts: many, listId: 'halt' } })).status).to.equal(200);
    const { body: c } = await create({ audience: { listId: 'halt' } });
    await api('POST', `/api/campaigns/${c.id}/send`);
    await new Promise((r) => setTimeout(r, 50));
    const { body } = await api('POST', `/api/campaigns/${c.id}/cancel`);
    expect(body.status).to.equal('cancelled');
    expect(await queuedInLog(c.id)).to.equal(body.progress.queued);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await queuedInLog(c.id)).to.equal(body.progress.queued);
    const later = await eventually(() => api('GET', `/api/campaigns/${c.id}`), (r) => r.body.stats.total === body.progress.queued, 10_000);
    expect(later.body).to.deep.include({ status: 'cancelled', progress: body.progress });
  });

  it('many pauses at once wait for one step without holding the connections the rest of the API needs', async () => {
    const many = Array.from({ length: 300 }, (_, i) => ({ email: `crowd${i}@example.org` }));
    expect((await app.request('POST', '/api/contacts/import', { token: token(), body: { contacts: many, listId: 'crowd' } })).status).to.equal(200);
    const { body: c } = await create({ audience: { listId: 'crowd' } });
    await api('POST', `/api/campaigns/${c.id}/send`);
    await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    // more than the API's ten connections: each waiting one held a connection, and all waited 30 s
    const pauses = Array.from({ length: 12 }, () => api('POST', `/api/campaigns/${c.id}/pause`));
    const settings = api('GET', '/api/settings').then((r) => ({ status: r.status, ms: Date.now() - started }));
    const answers = await Promise.all(pauses);
    expect(answers.map((r) => [r.status, r.body.status])).to.deep.equal(answers.map(() => [200, 'paused']));
    expect(Date.now() - started).to.be.below(15_000);
    expect((await settings).status).to.equal(200);
    expect((await settings).ms).to.be.below(10_000);
  });

  it('a pause answered is the state that stays: a campaign of nobody paused as it is sent stays paused, or was sent first (409)', async () => {
    const { body: c } = await create({ audience: { listId: 'nobody-at-all' } });
    await api('POST', `/api/campaigns/${c.id}/send`);
    const paused = await api('POST', `/api/campaigns/${c.id}/pause`);
    await new Promise((r) => setTimeout(r, 1_000));
    const { body } = await api('GET', `/api/campaigns/${c.id}`);
    if (paused.status === 200) expect([paused.body.status, body.status]).to.deep.equal(['paused', 'paused']);
    else expect([paused.status, body.status]).to.deep.equal([409, 'sent']);
  });

  it('a template that renders far more than it is made of pauses the campaign (template_failed), queueing nobody, as a send would refuse it', async () => {
    const many = Array.from({ length: 3 }, (_, i) => ({ email: `amplified${i}@example.org` }));
    expect((await app.request('POST', '/api/contacts/import', { token: token(), body: { contacts: many, listId: 'amplified' } })).status).to.equal(200);
    const t = await api('POST', '/api/templates', { name: 'amplifying', subject: 'Hi', html: '{{#a}}{{#a}}{{#a}}{{#a}}{{b}}{{/a}}{{/a}}{{/a}}{{/a}}', text: 't' });
    const { body: c } = await create({ templateId: t.body.id, audience: { listId: 'amplified' }, variables: { a: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], b: 'x'.repeat(300) } });
    await api('POST', `/api/campaigns/${c.id}/send`);
    const paused = await eventually(() => api('GET', `/api/campaigns/${c.id}`), (r) => r.body.status === 'paused', 30_000);
    expect(paused.body).to.deep.include({ pausedReason: 'template_failed' });
    expect(paused.body.progress.queued).to.equal(0);
  });

  describe('message detail and unsubscribe', () => {
    let receiver: ScriptedReceiver;
    before(async () => {
      receiver = await startScriptedReceiver([200]);
      expect((await api('POST', '/api/webhooks', { url: receiver.hook, events: ['contact.unsubscribed'] })).status).to.equal(201);
    });
    after(async () => receiver?.close());

    it('a JWT sees the campaign {id, name} on its message; a key does not see the message; a key sees no campaign key on its own', async () => {
      await contact({ email: 'detail@example.org', listIds: ['detail'] });
      const { body: c } = await create({ name: 'Detail', audience: { listId: 'detail' } });
      await api('POST', `/api/campaigns/${c.id}/send`);
      await finished(c.id);
      const [row] = await app.infra.db('messages').where({ campaign_id: c.id });
      const detail = await api('GET', `/api/messages/${row.id}`);
      expect(detail.body).to.deep.include({ campaignId: c.id, campaign: { id: c.id, name: 'Detail' } });
      expect((await app.request('GET', `/api/messages/${row.id}`, { apiKey: key })).status).to.equal(404);
      const own = await app.request('POST', '/api/send/transactional', { apiKey: key, body: { to: 'x@example.org', fromEmail: from, subject: 's', text: 't', html: '<p>t</p>' } });
      const ownDetail = await eventually(() => app.request('GET', `/api/messages/${own.body.messageLogId}`, { apiKey: key }), (r) => r.status === 200);
      expect(ownDetail.body).to.not.have.any.keys('campaign', 'contact');
      expect((await api('GET', `/api/messages/${own.body.messageLogId}`)).body.campaign).to.equal(null);
    });

    it('unsubscribing from a campaign message sets the contact unsubscribed and fires contact.unsubscribed with campaignId', async () => {
      await contact({ email: 'leaver@example.org', listIds: ['leavers'] });
      const { body: c } = await create({ audience: { listId: 'leavers' } });
      await api('POST', `/api/campaigns/${c.id}/send`);
      await finished(c.id);
      const delivered = await eventually(() => deliveredByRecipient(app, c.id), (m) => m.size === 1);
      const header = delivered.get('leaver@example.org')!.headers.find((h: { name: string }) => h.name === 'List-Unsubscribe').value as string;
      const res = await fetch(header.slice(1, -1), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
      expect(res.status).to.equal(200);
      const contacts = await eventually(() => app.request('GET', '/api/contacts?search=leaver', { token: token() }), (r) => r.body.items?.[0]?.status === 'unsubscribed');
      expect(contacts.body.items[0].status).to.equal('unsubscribed');
      const hook = await eventually(async () => receiver.requests.map((r) => JSON.parse(r.body)), (bodies) => bodies.some((b) => b.data.email === 'leaver@example.org'));
      const body = hook.find((b) => b.data.email === 'leaver@example.org');
      expect(body).to.deep.include({ event: 'contact.unsubscribed' });
      expect(body.data).to.deep.include({ source: 'one_click', campaignId: c.id });
    });
  });
});

describe('campaigns: the daily cap pauses a campaign until the next UTC day', function () {
  this.timeout(60_000);
  let app: TestApp;
  let now = new Date('2031-05-04T22:00:00.000Z');

  before(async () => {
    app = await startTestApp({ CAMPAIGN_STEP_SIZE: '10', CAMPAIGN_TIMER_INTERVAL_MS: '200' }, { clock: () => now });
  });
  after(async () => app?.close());

  it('stops at the cap with pausedReason daily_send_cap, resumes by itself after 00:00 UTC and reaches everyone once', async () => {
    const { from } = await readyToSend(app);
    const api = (method: string, path: string, body?: unknown) => app.request(method, path, { token: app.adminToken, body });
    expect((await api('PATCH', '/api/settings', { dailySendCap: 3 })).status).to.equal(200);
    const contacts = Array.from({ length: 5 }, (_, i) => ({ email: `capped${i}@example.org` }));
    await api('POST', '/api/contacts/import', { contacts, listId: 'capped' });
    const t = await api('POST', '/api/templates', { name: 't', subject: 's', html: '<p>h</p>', text: 't' });
    const { body: c } = await api('POST', '/api/campaigns', { name: 'Capped', templateId: t.body.id, fromEmail: from, audience: { listId: 'capped' } });
    await api('POST', `/api/campaigns/${c.id}/send`);

    const paused = await eventually(() => api('GET', `/api/campaigns/${c.id}`), (r) => r.body.status === 'paused', 20_000);
    expect(paused.body).to.deep.include({ pausedReason: 'daily_send_cap' });
    expect(paused.body.progress).to.deep.include({ audience: 5, queued: 3, skipped: 0 });
    // still the same day: it stays paused
    await new Promise((r) => setTimeout(r, 1_000));
    expect((await api('GET', `/api/campaigns/${c.id}`)).body.status).to.equal('paused');

    now = new Date('2031-05-05T00:00:01.000Z');
    const done = await eventually(() => api('GET', `/api/campaigns/${c.id}`), (r) => r.body.status === 'sent', 20_000);
    expect(done.body.progress).to.deep.include({ audience: 5, queued: 5, skipped: 0 });
    expect(done.body.pausedReason).to.equal(null);
    // the messages read model follows the log on its own, a little behind the campaign's
    const rows = await eventually(() => app.infra.db('messages').where({ campaign_id: c.id }).select('to_address'), (r) => r.length >= 5);
    expect(rows.map((r) => r.to_address).sort()).to.deep.equal(contacts.map((x) => x.email).sort());
  });
});
