import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/app.js';

/**
 * Many requests changing the same contacts at once (two integrations syncing one list, a retrying
 * client): each is decided again on the newest state until it lands, never a 500, and nothing any of
 * them added is lost.
 */
describe('contacts changed by many requests at once', function () {
  this.timeout(120_000);
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => app?.close());

  it('40 upserts of one contact at once all answer 200 or 201, and the contact ends as one of them wrote it', async () => {
    const email = 'busy@example.org';
    expect((await app.request('POST', '/api/contacts', { token: app.adminToken, body: { email } })).status).to.equal(201);
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => app.request('POST', '/api/contacts', { token: app.adminToken, body: { email, firstName: `N${i}`, company: `C${i}`, listIds: [`list${i}`] } })),
    );
    expect(answers.map((r) => r.status).filter((s) => s !== 200)).to.deep.equal([]);
    const { items } = (await app.request('GET', `/api/contacts?search=${email}`, { token: app.adminToken })).body;
    const i = Number(items[0].firstName.slice(1));
    expect(items[0]).to.deep.include({ firstName: `N${i}`, company: `C${i}`, listIds: [`list${i}`] });
  });

  it('20 imports of the same contacts at once, each adding its own list: all answer 200 and every contact is on every list', async () => {
    const contacts = Array.from({ length: 50 }, (_, i) => ({ email: `synced${i}@example.org` }));
    expect((await app.request('POST', '/api/contacts/import', { token: app.adminToken, body: { contacts } })).status).to.equal(200);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, j) => app.request('POST', '/api/contacts/import', { token: app.adminToken, body: { contacts, listId: `sync${j}` } })),
    );
    expect(answers.map((r) => r.status).filter((s) => s !== 200), JSON.stringify(answers.find((r) => r.status !== 200)?.body)).to.deep.equal([]);
    const { items } = (await app.request('GET', '/api/contacts?search=synced&limit=100', { token: app.adminToken })).body;
    expect(items).to.have.length(50);
    const lists = Array.from({ length: 20 }, (_, j) => `sync${j}`).sort();
    for (const c of items) expect([...c.listIds].sort(), c.email).to.deep.equal(lists);
  });
});
