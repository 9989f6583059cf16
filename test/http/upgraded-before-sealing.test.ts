import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { createEventStore } from '../../src/adapters/eventstore/index.js';
import { DELIVER_WEBHOOK_JOB } from '../../src/domain/webhooks/delivery.js';
import { migrationSource } from '../../src/migrations/source.js';
import type { EventStore } from '../../src/ports/event-store.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase } from '../support/db.js';
import { eventually } from '../support/email-setup.js';
import { startWebhookSink, type WebhookSink } from '../support/provider-events-webhook-sink.js';

/**
 * A database first run by a version that kept personal data in clear (before migration 021 added the
 * data keys), then upgraded: its contact and suppression streams are named by address, and their
 * events hold it in clear. What was recorded then must go on working: the suppression lifted, the
 * contact kept under its id, a repeated suppression seen as one.
 */
describe('a database from before personal data was sealed, upgraded', function () {
  this.timeout(60_000);
  let app: TestApp;
  let sink: WebhookSink;
  let bare: EventStore;
  let accountId: string;
  let key: string;

  /** an event as that version appended it: in clear, on a stream named by the address */
  const appendedThen = (streamId: string, type: string, data: Record<string, unknown>) =>
    bare.append(streamId, [{ id: randomUUID(), type, data, metadata: { actor: 'user:then' } }], { expectedRevision: 'no_stream' });
  const suppressionEventsOf = async (address: string) =>
    (await app.infra.db('events').where('stream_id', 'like', `suppression-${accountId}-%`).select('type', 'data', 'metadata')).filter(
      (e) => e.data.value === address || e.metadata.person === app.infra.privacy.personOf(address),
    );

  before(async () => {
    const database = await createTestDatabase({ migrate: false });
    // the schema of a version without sealing, in its own batch; the app migrates the rest in the next
    await database.db.migrate.latest({
      migrationSource: { ...migrationSource, getMigrations: async (extensions) => (await migrationSource.getMigrations(extensions)).filter((file) => file < '021') },
    });
    sink = await startWebhookSink();
    app = await startTestApp({}, { database });
    accountId = (await app.infra.db('accounts').first('id')).id;
    ({ key } = await app.createApiKey(['contacts:read', 'contacts:write']));
    expect((await app.request('POST', '/api/webhooks', { token: app.adminToken, body: { url: sink.url } })).status).to.equal(201);

    bare = createEventStore({ databaseUrl: app.config.DATABASE_URL! });
    await appendedThen(`suppression-${accountId}-old@example.org`, 'AddressSuppressed', {
      accountId, value: 'old@example.org', kind: 'email', reason: 'bounced', source: 'bounce', messageId: null, campaignId: null, detail: null, occurredAt: '2026-11-20T10:00:00.000Z',
    });
    await appendedThen(`contact-${accountId}-ada@example.org`, 'ContactUpserted', {
      contactId: 'c-then', accountId, email: 'ada@example.org', created: true,
      fields: { firstName: 'Ada', lastName: 'Lovelace', company: null, tags: [], status: 'subscribed', listIds: [] }, at: '2026-11-20T10:00:00.000Z',
    });
    await eventually(async () => (await app.request('GET', '/api/suppressions?search=old@', { token: app.adminToken })).body.items.length, (n) => n === 1);
    await eventually(async () => (await app.request('GET', '/api/contacts?search=ada@', { apiKey: key })).body.total, (n) => n === 1);
  });
  after(async () => {
    await bare?.close();
    await app?.close();
    await sink?.close();
  });

  it('is told apart from a database made since', () => {
    expect(app.infra.streamsNamedByAddress).to.equal(true);
  });

  it('a suppression recorded then is one: adding it again appends nothing and fires nothing; it can be lifted', async () => {
    const again = await app.request('POST', '/api/suppressions', { token: app.adminToken, body: { email: 'Old@example.org' } });
    expect(again.status, JSON.stringify(again.body)).to.equal(200);
    expect(again.body).to.include({ email: 'old@example.org', reason: 'bounced', source: 'bounce' });
    expect((await suppressionEventsOf('old@example.org')).map((e) => e.type)).to.deep.equal(['AddressSuppressed']);

    const lifted = await app.request('DELETE', '/api/suppressions/old@example.org', { token: app.adminToken });
    expect(lifted.status, JSON.stringify(lifted.body)).to.equal(200);
    expect(lifted.body).to.deep.equal({ email: 'old@example.org', lifted: true });
    expect((await app.request('GET', '/api/suppressions?search=old@', { token: app.adminToken })).body.items).to.deep.equal([]);
    expect((await suppressionEventsOf('old@example.org')).map((e) => e.type)).to.deep.equal(['AddressSuppressed', 'SuppressionLifted']);
    // (the bounce recorded then was fanned out when it was appended here: only that one)
    expect(sink.received.filter((r) => r.body?.data?.email === 'old@example.org').map((r) => r.event)).to.deep.equal(['contact.bounced']);
  });

  it('a contact recorded then keeps its id through an upsert and an import, and names it in webhooks', async () => {
    const updated = await app.request('POST', '/api/contacts', { apiKey: key, body: { email: 'ADA@example.org', firstName: 'Augusta' } });
    expect(updated.status, JSON.stringify(updated.body)).to.equal(200);
    expect(updated.body).to.include({ id: 'c-then', email: 'ada@example.org', firstName: 'Augusta', lastName: 'Lovelace' });

    const unchanged = await app.request('POST', '/api/contacts/import', { apiKey: key, body: { contacts: [{ email: 'ada@example.org', firstName: 'Augusta' }] } });
    expect(unchanged.body).to.include({ created: 0, updated: 0, unchanged: 1 });
    const changed = await app.request('POST', '/api/contacts/import', { apiKey: key, body: { contacts: [{ email: 'ada@example.org', company: 'Analytical' }] } });
    expect(changed.body).to.include({ created: 0, updated: 1, unchanged: 0 });
    const listed = await app.request('GET', '/api/contacts?search=ada@', { apiKey: key });
    expect(listed.body.items.map((c: { id: string; company: string }) => [c.id, c.company])).to.deep.equal([['c-then', 'Analytical']]);

    expect((await app.request('POST', '/api/suppressions', { token: app.adminToken, body: { email: 'ada@example.org' } })).status).to.equal(201);
    const hook = (await eventually(async () => sink.received.find((r) => r.body?.data?.email === 'ada@example.org'), Boolean, 20_000))!;
    expect(hook.body.data).to.include({ contactId: 'c-then', firstName: 'Augusta', lastName: 'Lovelace' });
  });

  it("erasing a person recorded then drops the copies that name them by address: a webhook delivery's body, a parked provider report", async () => {
    const { db } = app.infra;
    await appendedThen(`contact-${accountId}-eve@example.org`, 'ContactUpserted', {
      contactId: 'c-eve', accountId, email: 'eve@example.org', created: true,
      fields: { firstName: 'Eve', lastName: 'Erasable', company: null, tags: [], status: 'subscribed', listIds: [] }, at: '2026-11-20T10:00:00.000Z',
    });
    const delivery = (to: string) => ({ id: `deliver:then-${to}`, kind: DELIVER_WEBHOOK_JOB, status: 'done', ordering_key: `sub-then:${to}`,
      payload: JSON.stringify({ schedule: { orderingKey: `sub-then:${to}`, body: { event: 'contact.suppressed', data: { email: to, firstName: 'Eve' } } } }) });
    await db('side_effects').insert([delivery('eve@example.org'), delivery('bob@example.org')]);
    const parked = (id: string, email: string) => ({ provider_event_id: id, provider_message_id: `pm-${id}`, payload: JSON.stringify({ RecordType: 'Bounce', Email: email }) });
    await db('unmatched_provider_events').insert([parked('then-eve', 'Eve@Example.org'), parked('then-bob', 'bob@example.org')]);

    const erased = await app.request('DELETE', '/api/contacts/eve@example.org?erase=true', { token: app.adminToken });
    expect(erased.status, JSON.stringify(erased.body)).to.equal(200);
    const bodies = await db('side_effects').whereIn('id', ['deliver:then-eve@example.org', 'deliver:then-bob@example.org']).orderBy('id').select('id', db.raw(`payload->'schedule'->'body' AS body`));
    expect(bodies.map((b) => [b.id, b.body === null])).to.deep.equal([['deliver:then-bob@example.org', false], ['deliver:then-eve@example.org', true]]);
    expect((await db('unmatched_provider_events').whereIn('provider_event_id', ['then-eve', 'then-bob']).pluck('provider_event_id'))).to.deep.equal(['then-bob']);
  });
});
