import { expect } from 'chai';
import { startLocalReceiver, type LocalReceiver } from '../adapters/webhooks/local-receiver.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { contactEventCount, expectError } from '../support/contacts-http.js';
import { eventually, readyToSend } from '../support/email-setup.js';

describe('contacts: POST /api/contacts and GET /api/contacts', function () {
  this.timeout(60_000);
  let app: TestApp;
  let rw: string;
  before(async () => {
    app = await startTestApp();
    ({ key: rw } = await app.createApiKey(['contacts:read', 'contacts:write']));
  });
  after(async () => app?.close());

  const upsert = (body: unknown, apiKey = rw) => app.request('POST', '/api/contacts', { apiKey, body });
  const list = (query = '', apiKey = rw) => app.request('GET', `/api/contacts${query}`, { apiKey });

  describe('upsert', () => {
    it('201 with the contact when created; the email is trimmed and lower-cased', async () => {
      const res = await upsert({ email: '  Ada.Lovelace@Example.ORG ', firstName: 'Ada', lastName: 'Lovelace', company: 'Engines', tags: ['vip', 'vip', 'math'], listIds: ['l1'] });
      expect(res.status).to.equal(201);
      expect(res.body).to.have.keys('id', 'email', 'firstName', 'lastName', 'company', 'tags', 'status', 'listIds', 'createdAt', 'updatedAt');
      expect(res.body).to.deep.include({ email: 'ada.lovelace@example.org', firstName: 'Ada', lastName: 'Lovelace', company: 'Engines', tags: ['vip', 'math'], status: 'subscribed', listIds: ['l1'] });
      expect(res.body.id).to.be.a('string').and.not.empty;
      expect(res.body.createdAt).to.equal(res.body.updatedAt);
    });

    it('200 with the contact when updated, matched by email in any case; fields not sent are kept, null clears', async () => {
      const first = await upsert({ email: 'grace@example.org', firstName: 'Grace', lastName: 'Hopper', company: 'Navy', tags: ['a'] });
      const res = await upsert({ email: 'GRACE@example.org', company: null, status: 'unsubscribed', tags: ['b'] });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.include({ id: first.body.id, email: 'grace@example.org', firstName: 'Grace', lastName: 'Hopper', company: null, tags: ['b'], status: 'unsubscribed', listIds: [] });
      expect(res.body.createdAt).to.equal(first.body.createdAt);
      expect(Date.parse(res.body.updatedAt)).to.be.greaterThan(Date.parse(first.body.updatedAt));
    });

    it('the same data again answers 200 and appends no event', async () => {
      const body = { email: 'same@example.org', firstName: 'Same', tags: ['x'] };
      expect((await upsert(body)).status).to.equal(201);
      const before = await contactEventCount(app);
      const again = await upsert({ ...body, email: 'Same@Example.org' });
      expect(again.status).to.equal(200);
      expect(again.body.firstName).to.equal('Same');
      expect(await contactEventCount(app)).to.equal(before);
    });

    it('accepts every status value: subscribed, unsubscribed, bounced, complained, suppressed', async () => {
      for (const status of ['subscribed', 'unsubscribed', 'bounced', 'complained', 'suppressed']) {
        const res = await upsert({ email: `status-${status}@example.org`, status });
        expect(res.status, status).to.equal(201);
        expect(res.body.status).to.equal(status);
      }
    });

    it('400 in the error shape for every invalid field', async () => {
      const long = (n: number) => 'x'.repeat(n);
      const cases: [unknown, RegExp][] = [
        [{}, /^email: /],
        [{ email: 'not-an-email' }, /^email: /],
        [{ email: 'a@b' }, /^email: /],
        [{ email: 42 }, /^email: /],
        [{ email: `${long(320)}@example.org` }, /^email: /],
        [{ email: 'x@example.org', firstName: long(201) }, /^firstName: /],
        [{ email: 'x@example.org', firstName: 7 }, /^firstName: /],
        [{ email: 'x@example.org', lastName: long(201) }, /^lastName: /],
        [{ email: 'x@example.org', company: long(201) }, /^company: /],
        [{ email: 'x@example.org', company: ['Acme'] }, /^company: /],
        [{ email: 'x@example.org', tags: 'vip' }, /^tags: /],
        [{ email: 'x@example.org', tags: ['ok', 3] }, /^tags\.1: /],
        [{ email: 'x@example.org', tags: ['  '] }, /^tags\.0: /],
        [{ email: 'x@example.org', tags: [long(101)] }, /^tags\.0: /],
        [{ email: 'x@example.org', tags: Array.from({ length: 101 }, (_, i) => `t${i}`) }, /^tags: /],
        [{ email: 'x@example.org', listIds: 'l1' }, /^listIds: /],
        [{ email: 'x@example.org', listIds: [{ id: 'l1' }] }, /^listIds\.0: /],
        [{ email: 'x@example.org', listIds: [long(101)] }, /^listIds\.0: /],
        [{ email: 'x@example.org', status: 'active' }, /^status: /],
        [{ email: 'x@example.org', status: 'Subscribed' }, /^status: /],
        [{ email: 'x@example.org', marketingConsent: true }, /marketingConsent/],
        [[{ email: 'x@example.org' }], /./],
      ];
      for (const [body, message] of cases) expectError(await upsert(body), 400, message);
      expectError(await app.request('POST', '/api/contacts', { apiKey: rw, body: '{"email":' }), 400, 'Malformed JSON in request body');
      expect((await list('?search=x@example.org')).body.total, 'nothing was written').to.equal(0);
    });

    it('an upsert never lifts a suppression; contacts and suppressions agree on the address whatever its case', async () => {
      const suppress = await app.request('POST', '/api/suppressions', { token: app.adminToken, body: { email: 'Blocked.User@Example.org' } });
      expect(suppress.status).to.equal(201);
      const created = await upsert({ email: 'blocked.user@example.ORG', firstName: 'B', status: 'subscribed' });
      expect(created.status).to.equal(201);
      expect(created.body.status).to.equal('suppressed');
      const resubscribe = await upsert({ email: 'BLOCKED.USER@example.org', status: 'subscribed', firstName: 'Bee' });
      expect(resubscribe.status).to.equal(200);
      expect(resubscribe.body).to.include({ status: 'suppressed', firstName: 'Bee' });
      const { key, from } = await readyToSend(app);
      const send = await app.request('POST', '/api/send/transactional', { apiKey: key, body: { to: 'blocked.user@example.org', fromEmail: from, subject: 's', html: '<p>h</p>', text: 't' } });
      expectError(send, 400, 'blocked.user@example.org is suppressed');
      // Lifting the suppression (an admin act, not an upsert) brings back the upserted status.
      expect((await app.request('DELETE', '/api/suppressions/blocked.user@example.org', { token: app.adminToken })).status).to.equal(200);
      const after = await eventually(
        () => list('?search=blocked.user'),
        (r) => r.body.items[0]?.status === 'subscribed',
      );
      expect(after.body.items[0].firstName).to.equal('Bee');
    });
  });

  describe('list', () => {
    let other: string;
    before(async () => {
      const signup = await app.request('POST', '/api/auth/signup', { body: { accountName: 'Listing', email: 'owner@listing.example', password: 'listing-password' } });
      expect(signup.status).to.equal(201);
      const key = await app.request('POST', '/api/api-keys', { token: signup.body.token, body: { name: 'k', scopes: ['contacts:read', 'contacts:write'] } });
      other = key.body.key;
      const contacts = Array.from({ length: 30 }, (_, i) => ({
        email: `member${String(i).padStart(2, '0')}@list.example`,
        firstName: i === 7 ? 'Zelda' : `First${i}`,
        lastName: i === 8 ? "O'Hara_100%" : `Last${i}`,
        company: i % 3 === 0 ? 'Globex Corp' : 'Initech',
        tags: i % 2 === 0 ? ['even'] : ['odd', 'prime-ish'],
        status: i % 10 === 9 ? 'unsubscribed' : 'subscribed',
      }));
      // one at a time so createdAt orders them
      for (const c of contacts) expect((await upsert(c, other)).status).to.equal(201);
    });
    const listOther = (query = '') => list(query, other);
    const emails = (res: { body: any }) => res.body.items.map((c: { email: string }) => c.email);

    it('pages newest first: default limit 25, {items, total, page, pageSize, totalPages}', async () => {
      const res = await listOther();
      expect(res.status).to.equal(200);
      expect(res.body).to.have.keys('items', 'total', 'page', 'pageSize', 'totalPages');
      expect(res.body).to.include({ total: 30, page: 1, pageSize: 25, totalPages: 2 });
      expect(res.body.items).to.have.length(25);
      expect(res.body.items[0].email).to.equal('member29@list.example');
      expect(res.body.items[0]).to.have.keys('id', 'email', 'firstName', 'lastName', 'company', 'tags', 'status', 'listIds', 'createdAt', 'updatedAt');
      const second = await listOther('?page=2');
      expect(second.body).to.include({ total: 30, page: 2, pageSize: 25, totalPages: 2 });
      expect(emails(second)).to.deep.equal(['member04@list.example', 'member03@list.example', 'member02@list.example', 'member01@list.example', 'member00@list.example']);
      const small = await listOther('?limit=7&page=3');
      expect(small.body).to.include({ total: 30, page: 3, pageSize: 7, totalPages: 5 });
      expect(emails(small)[0]).to.equal('member15@list.example');
      const beyond = await listOther('?page=9');
      expect(beyond.body).to.include({ total: 30, page: 9 });
      expect(beyond.body.items).to.deep.equal([]);
      expect((await listOther('?limit=100')).body.items).to.have.length(30);
    });

    it('search matches email, first and last name, and company, case-insensitively and literally', async () => {
      expect(emails(await listOther('?search=MEMBER07'))).to.deep.equal(['member07@list.example']);
      expect(emails(await listOther('?search=zeld'))).to.deep.equal(['member07@list.example']);
      expect(emails(await listOther('?search=last12'))).to.deep.equal(['member12@list.example']);
      expect((await listOther('?search=globex')).body.total).to.equal(10);
      expect(emails(await listOther(`?search=${encodeURIComponent("o'hara_100%")}`))).to.deep.equal(['member08@list.example']);
      expect((await listOther('?search=100%25')).body.total, '% is not a wildcard').to.equal(1);
      expect((await listOther('?search=_')).body.total, '_ is not a wildcard').to.equal(1);
      expect((await listOther('?search=nobody')).body).to.include({ total: 0, totalPages: 0 });
    });

    it('filters by status and tag, combined with search and paging', async () => {
      expect(emails(await listOther('?status=unsubscribed'))).to.deep.equal(['member29@list.example', 'member19@list.example', 'member09@list.example']);
      expect((await listOther('?tag=even')).body.total).to.equal(15);
      expect((await listOther('?tag=prime-ish')).body.total).to.equal(15);
      expect((await listOther('?tag=ev')).body.total, 'tags match whole').to.equal(0);
      const combined = await listOther('?tag=odd&search=globex&status=subscribed&limit=2');
      expect(combined.body).to.include({ total: 4, pageSize: 2, totalPages: 2 });
      expect(emails(combined)).to.deep.equal(['member27@list.example', 'member21@list.example']);
    });

    it('a tag or list filter sent in another form is refused, not ignored: every contact would be answered', async () => {
      const cases: [string, { field: string; message: string }[]][] = [
        ['?tag[]=even', [{ field: 'tag[]', message: 'one tag is sent as tag=<tag>, without brackets' }]],
        ['?tag[0]=even&listId[]=l1', [{ field: 'tag[0]', message: 'one tag is sent as tag=<tag>, without brackets' }, { field: 'listId[]', message: 'one list is sent as listId=<id>, without brackets' }]],
        ['?tag=even&tag=odd', [{ field: 'tag', message: 'filter on one tag at a time' }]],
        ['?listId=a&listId=b&limit=0', [{ field: 'limit', message: 'Too small: expected number to be >=1' }, { field: 'listId', message: 'filter on one list at a time' }]],
      ];
      for (const [query, issues] of cases) {
        const res = await listOther(query);
        expect([res.status, res.body.message], query).to.deep.equal([400, `${issues[0].field}: ${issues[0].message}`]);
        expect(res.body.issues, query).to.deep.equal(issues);
      }
    });

    it('never shows another account\'s contacts', async () => {
      expect((await listOther('?search=ada.lovelace')).body.total).to.equal(0);
      expect((await list('?search=list.example')).body.total).to.equal(0);
    });

    it('GET /api/contacts/:email is the one contact with that address, as contacts are keyed; 404 for none or another account\'s; 400 for no address', async () => {
      const one = (email: string, apiKey = other) => app.request('GET', `/api/contacts/${encodeURIComponent(email)}`, { apiKey });
      const found = await one('member07@list.example');
      expect(found.status).to.equal(200);
      expect(found.body).to.deep.equal((await listOther('?search=member07')).body.items[0]);
      // the address as it was typed: case and surrounding space as an upsert takes them
      expect((await one(' Member07@LIST.example ')).body.id).to.equal(found.body.id);
      // an address that others contain is not found through them
      expect((await upsert({ email: 'ember07@list.example' }, other)).status).to.equal(201);
      expect((await one('ember07@list.example')).body.email).to.equal('ember07@list.example');
      expectError(await one('nobody@list.example'), 404, 'contact nobody@list.example not found');
      expectError(await one('member07@list.example', rw), 404, 'contact member07@list.example not found');
      expectError(await one('not-an-address'), 400, /^email: /);
      const { key: sender } = await app.createApiKey(['send']);
      expectError(await one('member07@list.example', sender), 403, 'API key is missing required scope: contacts:read');
    });

    it('400 for limit above 100, a bad page, limit or status', async () => {
      for (const q of ['?limit=101', '?limit=0', '?limit=abc', '?page=0', '?page=-1', '?page=1.5', '?status=active', `?search=${'x'.repeat(321)}`]) {
        expectError(await listOther(q), 400, /./);
      }
    });
  });

  describe('scopes and dashboard access', () => {
    it('contacts:read lists but cannot write: 403 naming contacts:write', async () => {
      const { key } = await app.createApiKey(['contacts:read']);
      expect((await list('', key)).status).to.equal(200);
      expectError(await upsert({ email: 'nope@example.org' }, key), 403, 'API key is missing required scope: contacts:write');
      expectError(await app.request('POST', '/api/contacts/import', { apiKey: key, body: { contacts: [] } }), 403, 'API key is missing required scope: contacts:write');
      expect((await list('?search=nope@', rw)).body.total).to.equal(0);
    });

    it('contacts:write writes but cannot list: 403 naming contacts:read; other scopes get neither', async () => {
      const { key } = await app.createApiKey(['contacts:write']);
      expect((await upsert({ email: 'writer@example.org' }, key)).status).to.equal(201);
      expectError(await list('', key), 403, 'API key is missing required scope: contacts:read');
      const { key: sender } = await app.createApiKey(['send', 'read_events']);
      expectError(await list('', sender), 403, 'API key is missing required scope: contacts:read');
      expectError(await upsert({ email: 'writer@example.org' }, sender), 403, 'API key is missing required scope: contacts:write');
      expectError(await app.request('GET', '/api/contacts'), 401, 'invalid API key');
    });

    it('a dashboard JWT reads and writes the account\'s contacts', async () => {
      const created = await app.request('POST', '/api/contacts', { token: app.adminToken, body: { email: 'dash@example.org', firstName: 'Dash' } });
      expect(created.status).to.equal(201);
      const listed = await app.request('GET', '/api/contacts?search=dash@', { token: app.adminToken });
      expect(listed.status).to.equal(200);
      expect(listed.body.items.map((c: { id: string }) => c.id)).to.deep.equal([created.body.id]);
      const imported = await app.request('POST', '/api/contacts/import', { token: app.adminToken, body: { contacts: [{ email: 'dash2@example.org' }] } });
      expect(imported.body).to.include({ created: 1 });
    });
  });

  describe('contact fields elsewhere', () => {
    it('the JWT view of a message carries the contact; an API key\'s view has no contact key', async () => {
      const contact = await upsert({ email: 'reader.one@example.org', firstName: 'Reader', lastName: 'One' });
      const { key, from } = await readyToSend(app);
      const sent = await app.request('POST', '/api/send/transactional', { apiKey: key, body: { to: 'Reader.One@example.org', fromEmail: from, subject: 's', html: '<p>h</p>', text: 't' } });
      expect(sent.status).to.equal(201);
      // the messages read model follows the send asynchronously
      const dashboard = await eventually(
        () => app.request('GET', `/api/messages/${sent.body.messageLogId}`, { token: app.adminToken }),
        (r) => r.status === 200,
      );
      expect(dashboard.body.contact).to.deep.include({ id: contact.body.id, firstName: 'Reader', lastName: 'One', email: 'reader.one@example.org' });
      const keyed = await app.request('GET', `/api/messages/${sent.body.messageLogId}`, { apiKey: key });
      expect(keyed.status).to.equal(200);
      expect(keyed.body).to.not.have.property('contact');
    });

    it('a suppression webhook carries the contact\'s id and names', async () => {
      let receiver: LocalReceiver | undefined;
      try {
        receiver = await startLocalReceiver({ '/hook': (_req, res) => res.writeHead(200).end('ok') });
        const hook = await app.request('POST', '/api/webhooks', { token: app.adminToken, body: { url: `${receiver.url}/hook`, events: ['contact.suppressed'] } });
        expect(hook.status).to.equal(201);
        const contact = await upsert({ email: 'hooked@example.org', firstName: 'Hook', lastName: 'Ed' });
        expect((await app.request('POST', '/api/suppressions', { token: app.adminToken, body: { email: 'Hooked@example.org' } })).status).to.equal(201);
        const requests = await eventually(
          async () => receiver!.requests,
          (r) => r.length > 0,
        );
        const body = JSON.parse(requests[0].body);
        expect(body.event).to.equal('contact.suppressed');
        expect(body.data).to.deep.include({ email: 'hooked@example.org', contactId: contact.body.id, firstName: 'Hook', lastName: 'Ed' });
      } finally {
        await receiver?.close();
      }
    });
  });
});
