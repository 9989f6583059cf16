import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import sinon from 'sinon';
import { WrongExpectedRevisionError } from '../../src/ports/event-store.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { contactEventCount, expectError } from '../support/contacts-http.js';

describe('contacts: POST /api/contacts/import', function () {
  this.timeout(60_000);
  let app: TestApp;
  let key: string;
  before(async () => {
    app = await startTestApp();
    ({ key } = await app.createApiKey(['contacts:read', 'contacts:write']));
  });
  after(async () => app?.close());

  const importContacts = (body: unknown) => app.request('POST', '/api/contacts/import', { apiKey: key, body });
  const find = async (email: string) => (await app.request('GET', `/api/contacts?search=${encodeURIComponent(email)}`, { apiKey: key })).body.items[0];
  const people = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({ email: `${prefix}${i}@import.example`, firstName: `F${i}`, tags: ['imported'] }));

  it('imports, adds listId to every contact, and the same body again appends nothing: created 0', async () => {
    const body = { contacts: [...people('a', 3), { email: 'A-Listed@Import.example', listIds: ['own'] }], listId: 'newsletter' };
    const first = await importContacts(body);
    expect(first.status).to.equal(200);
    expect(first.body).to.deep.equal({ total: 4, created: 4, updated: 0, unchanged: 0 });
    expect((await find('a0@import.example')).listIds).to.deep.equal(['newsletter']);
    expect(await find('a-listed@import.example')).to.deep.include({ email: 'a-listed@import.example', listIds: ['own', 'newsletter'] });

    const events = await contactEventCount(app);
    const again = await importContacts(body);
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.equal({ total: 4, created: 0, updated: 0, unchanged: 4 });
    expect(await contactEventCount(app)).to.equal(events);
  });

  it('counts created, updated and unchanged rows in one batch', async () => {
    await importContacts({ contacts: people('b', 3) });
    const res = await importContacts({ contacts: [people('b', 3)[0], { ...people('b', 3)[1], company: 'Changed' }, ...people('b-new', 2)] });
    expect(res.body).to.deep.equal({ total: 4, created: 2, updated: 1, unchanged: 1 });
    expect((await find('b1@import.example')).company).to.equal('Changed');
  });

  it('mixed valid and invalid rows: invalid ones are listed by index with the reason, the valid ones imported', async () => {
    const res = await importContacts({
      contacts: [
        { email: 'c-good1@import.example' },
        { email: 'not-an-email' },
        { email: 'c-good2@import.example', tags: 'vip' },
        'just a string',
        null,
        { email: 'c-good3@import.example', status: 'gone' },
        { email: 'C-GOOD1@import.example', firstName: 'twice' },
        { email: 'c-good4@import.example', firstName: 'x'.repeat(201) },
        { email: 'c-good5@import.example', extra: 1 },
        { email: 'c-good6@import.example', status: 'bounced' },
      ],
    });
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ total: 10, created: 2, updated: 0, unchanged: 0 });
    expect(res.body.errors.map((e: { index: number }) => e.index)).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8]);
    const byIndex = Object.fromEntries(res.body.errors.map((e: { index: number; message: string }) => [e.index, e]));
    expect(byIndex[1]).to.deep.include({ email: 'not-an-email' });
    expect(byIndex[1].message).to.match(/^email: /);
    expect(byIndex[2].message).to.match(/^tags: /);
    expect(byIndex[5].message).to.match(/^status: /);
    expect(byIndex[6].message).to.equal('duplicate of contacts[0] in this request');
    expect(byIndex[7].message).to.match(/^firstName: /);
    expect(byIndex[8].message).to.match(/extra/);
    expect(await find('c-good1@import.example')).to.include({ firstName: null });
    expect(await find('c-good6@import.example')).to.include({ status: 'bounced' });
    expect(await find('c-good2@import.example')).to.equal(undefined);
  });

  it('5,000 contacts in one request are accepted; 5,001 are a 400 naming the limit', async () => {
    const many = people('bulk', 5000);
    const ok = await importContacts({ contacts: many, listId: 'big' });
    expect(ok.status).to.equal(200);
    expect(ok.body).to.deep.equal({ total: 5000, created: 5000, updated: 0, unchanged: 0 });
    const listed = await app.request('GET', '/api/contacts?search=bulk&limit=1', { apiKey: key });
    expect(listed.body.total).to.equal(5000);
    const events = await contactEventCount(app);
    const tooMany = await importContacts({ contacts: [...many, { email: 'one-more@import.example' }] });
    expectError(tooMany, 400, 'contacts: at most 5000 contacts per request (got 5001)');
    expect(await contactEventCount(app)).to.equal(events);
  });

  it('400 for a body that is not {contacts: [...], listId?}', async () => {
    expectError(await importContacts({}), 400, /^contacts: /);
    expectError(await importContacts({ contacts: { email: 'a@b.example' } }), 400, /^contacts: /);
    expectError(await importContacts({ contacts: [], listId: '' }), 400, /^listId: /);
    expectError(await importContacts({ contacts: [], listId: 7 }), 400, /^listId: /);
    expectError(await importContacts({ contacts: [], surprise: true }), 400, /surprise/);
    expect((await importContacts({ contacts: [] })).body).to.deep.equal({ total: 0, created: 0, updated: 0, unchanged: 0 });
  });

  it('a stale read model costs nothing but time: the chunk is refused by the store and each contact settles on its stream', async () => {
    await importContacts({ contacts: people('d', 3) });
    // Make the read model claim an older revision than the streams have: the chunk's append must
    // then be refused as a whole and every row redone against its stream.
    expect(await app.infra.db('contacts').where('email', 'like', 'd%@import.example').update({ revision: -5 })).to.equal(3);
    const res = await importContacts({ contacts: people('d', 3).map((c) => ({ ...c, company: 'Stale' })) });
    expect(res.body).to.deep.equal({ total: 3, created: 0, updated: 3, unchanged: 0 });
    const { account_id: accountId } = await app.infra.db('contacts').where({ email: 'd0@import.example' }).first('account_id');
    const stream = await app.infra.eventStore.readStream(`contact-${accountId}-${app.infra.privacy.personOf('d0@import.example')}`);
    expect(stream.map((e) => [e.revision, e.data.fields.company])).to.deep.equal([
      [0, null],
      [1, 'Stale'],
    ]);
    for (const c of people('d', 3)) expect((await find(c.email)).company).to.equal('Stale');
  });

  it('the same body again is confirmed from the streams’ revisions: no contact stream is read', async () => {
    await importContacts({ contacts: people('r', 300) });
    const reads = sinon.spy(app.infra.eventStore, 'readStream');
    try {
      const again = await importContacts({ contacts: people('r', 300) });
      expect(again.body).to.deep.equal({ total: 300, created: 0, updated: 0, unchanged: 300 });
      expect(reads.getCalls().filter((c) => c.args[0].startsWith('contact-'))).to.have.length(0);
    } finally {
      reads.restore();
    }
  });

  it('a row that does not reflect its stream is not trusted to be unchanged: the import confirms it on the stream and applies its change', async () => {
    await importContacts({ contacts: people('u', 3) });
    // The read model shows what the import is about to ask for, at a revision its streams have left:
    // trusting the row would call the contacts unchanged and lose the change.
    expect(await app.infra.db('contacts').where('email', 'like', 'u%@import.example').update({ company: 'Next', revision: -5 })).to.equal(3);
    const res = await importContacts({ contacts: people('u', 3).map((c) => ({ ...c, company: 'Next' })) });
    expect(res.body).to.deep.equal({ total: 3, created: 0, updated: 3, unchanged: 0 });
    for (const c of people('u', 3)) expect((await find(c.email)).company).to.equal('Next');
  });

  it('concurrent imports of the same contacts create each one exactly once', async () => {
    const body = { contacts: people('e', 200) };
    const results = await Promise.all([importContacts(body), importContacts(body), importContacts(body)]);
    for (const r of results) expect(r.status).to.equal(200);
    expect(results.reduce((n, r) => n + r.body.created, 0)).to.equal(200);
    expect(results.reduce((n, r) => n + r.body.created + r.body.unchanged + r.body.updated, 0)).to.equal(600);
    const listed = await app.request('GET', '/api/contacts?search=@import.example&tag=imported&limit=1', { apiKey: key });
    expect(listed.status).to.equal(200);
    const rows = await app.infra.db('contacts').where('email', 'like', 'e%@import.example').count('* as n').first();
    expect(Number(rows?.n)).to.equal(200);
  });

  it('a chunk is appended all or nothing: one refused stream leaves every other stream unwritten', async () => {
    const store = app.infra.eventStore;
    expect(store.appendMany, 'the PostgreSQL store appends across streams').to.be.a('function');
    const taken = `contact-atomic-${randomUUID()}`;
    await store.append(taken, [{ id: randomUUID(), type: 'ContactUpserted', data: {} }]);
    const fresh = [`contact-atomic-${randomUUID()}`, `contact-atomic-${randomUUID()}`];
    const attempt = store.appendMany!([
      { streamId: fresh[0], events: [{ id: randomUUID(), type: 'ContactUpserted', data: {} }], expectedRevision: 'no_stream' },
      { streamId: taken, events: [{ id: randomUUID(), type: 'ContactUpserted', data: {} }], expectedRevision: 'no_stream' },
      { streamId: fresh[1], events: [{ id: randomUUID(), type: 'ContactUpserted', data: {} }], expectedRevision: 'no_stream' },
    ]);
    const err = await attempt.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(WrongExpectedRevisionError);
    expect((err as WrongExpectedRevisionError).streamId).to.equal(taken);
    for (const s of fresh) expect(await store.readStream(s)).to.deep.equal([]);
    const ok = await store.appendMany!(fresh.map((streamId) => ({ streamId, events: [{ id: randomUUID(), type: 'ContactUpserted', data: {} }], expectedRevision: 'no_stream' as const })));
    expect(ok.map((r) => r.nextRevision)).to.deep.equal([0, 0]);
    for (const s of fresh) expect(await store.readStream(s)).to.have.length(1);
  });
});
