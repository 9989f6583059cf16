import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/app.js';
import { readyToSend } from '../support/email-setup.js';

const DEEP_ARRAYS = '['.repeat(50_000) + ']'.repeat(50_000);
const DEEP_MESSAGE = 'request body is nested deeper than 64 levels';

/** `levels` objects inside one another, as JSON text: `{"a":{"a":...1...}}` */
const nestedObjects = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);

function expectBadRequest(res: { status: number; body: any }, message: string | RegExp, what: string): void {
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).to.equal(400);
  // a refusal by the route's schema also lists its problems (`issues`); the rest is the error shape exactly
  expect(Object.keys(res.body).filter((k) => k !== 'issues'), what).to.have.members(['message', 'error', 'statusCode']);
  expect(res.body).to.include({ error: 'Bad Request', statusCode: 400 });
  if (typeof message === 'string') expect(res.body.message, what).to.equal(message);
  else expect(res.body.message, what).to.match(message);
}

describe('hostile input: deep nesting, unpaired surrogates (every route, before any handler)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let sender: { key: string; from: string };
  let contactsKey: string;
  let templateId: string;

  const raw = async (method: string, path: string, body: BodyInit, headers: Record<string, string> = {}) => {
    const res = await fetch(app.baseUrl + path, { method, headers: { 'content-type': 'application/json', ...headers }, body });
    const text = await res.text();
    let parsed: any = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed };
  };
  const eventCount = async () => Number((await app.infra.db('events').count('* as n').first())?.n);

  before(async () => {
    app = await startTestApp({ ALLOW_SIGNUP: 'true' });
    sender = await readyToSend(app);
    contactsKey = (await app.createApiKey(['contacts:read', 'contacts:write'])).key;
    const template = await app.request('POST', '/api/templates', { token: app.adminToken, body: { name: 'hello', subject: 'Hi {{name}}', html: '<p>{{name}}</p>', text: '{{name}}' } });
    expect(template.status, JSON.stringify(template.body)).to.equal(201);
    templateId = template.body.id;
  });
  after(async () => {
    await app?.close();
  });

  describe('a body of very many fields', () => {
    it('more than 100,000 fields → 400 naming the limit before parsing; up to it, an answer lists 100 problems at most', async () => {
      const fields = (n: number) => `{${Array.from({ length: n }, (_, i) => `"k${i}":1`).join(',')}}`;
      expectBadRequest(await raw('POST', '/api/auth/login', fields(780_000)), /^request body has more than 100,000 fields$/, 'public');
      expectBadRequest(await raw('POST', '/api/send/transactional', fields(100_001), { 'x-api-key': sender.key }), /^request body has more than 100,000 fields$/, 'send');
      const many = await raw('POST', '/api/auth/login', fields(5_000));
      expect(many.status).to.equal(400);
      expect(many.body.issues).to.have.length(100);
      expect(JSON.stringify(many.body).length).to.be.below(20_000);
      // colons inside strings are no fields
      expect((await raw('POST', '/api/auth/login', JSON.stringify({ email: 'a@b', password: ':'.repeat(200_000) }))).body.message).not.to.include('fields');
    });
  });

  describe('nesting deeper than 64 levels', () => {
    it('50,000 nested arrays posted to /api/auth/login (public) → 400 naming the limit, not a 500', async () => {
      expectBadRequest(await raw('POST', '/api/auth/login', DEEP_ARRAYS), DEEP_MESSAGE, 'arrays');
      expectBadRequest(await raw('POST', '/api/auth/login', nestedObjects(50_000)), DEEP_MESSAGE, 'objects');
      // inside an otherwise well-formed body
      const inField = `{"email":"admin@localhost","password":${DEEP_ARRAYS}}`;
      expectBadRequest(await raw('POST', '/api/auth/login', inField), DEEP_MESSAGE, 'in a field');
    });

    it('on routes behind a JWT or an API key alike; a bad credential is still answered first', async () => {
      const jwt = { authorization: `Bearer ${app.adminToken}` };
      expectBadRequest(await raw('POST', '/api/templates', DEEP_ARRAYS, jwt), DEEP_MESSAGE, 'templates');
      expectBadRequest(await raw('POST', '/api/send/transactional', DEEP_ARRAYS, { 'x-api-key': sender.key }), DEEP_MESSAGE, 'send');
      expectBadRequest(await raw('POST', '/api/contacts/import', DEEP_ARRAYS, { 'x-api-key': contactsKey }), DEEP_MESSAGE, 'import');
      expect((await raw('POST', '/api/templates', DEEP_ARRAYS, { authorization: 'Bearer nope' })).status).to.equal(401);
      expect((await raw('POST', '/api/send/transactional', DEEP_ARRAYS, { 'x-api-key': 'nope' })).status).to.equal(401);
    });

    it('in a body declared as UTF-16 too', async () => {
      const res = await raw('POST', '/api/auth/login', Buffer.from(DEEP_ARRAYS, 'utf16le'), { 'content-type': 'application/json; charset=utf-16le' });
      expectBadRequest(res, DEEP_MESSAGE, 'utf-16le');
    });

    it('64 levels are allowed (the route schema answers), 65 are not; brackets inside strings do not count', async () => {
      // the body object is level 1, so the password's 63 arrays reach 64
      const at64 = await raw('POST', '/api/auth/login', `{"email":"admin@localhost","password":${'['.repeat(63)}${']'.repeat(63)}}`);
      expectBadRequest(at64, /^password: /, '64 levels');
      const at65 = await raw('POST', '/api/auth/login', `{"email":"admin@localhost","password":${'['.repeat(64)}${']'.repeat(64)}}`);
      expectBadRequest(at65, DEEP_MESSAGE, '65 levels');
      const inString = await raw('POST', '/api/auth/login', JSON.stringify({ email: 'admin@localhost', password: '["{\\"'.repeat(200) }));
      expect(inString.status, JSON.stringify(inString.body)).to.equal(401);
    });
  });

  describe('an unpaired UTF-16 surrogate (PostgreSQL refuses it in jsonb)', () => {
    const surrogate = (field: string) => new RegExp(`^request body contains an unpaired UTF-16 surrogate \\(U\\+D[89A-F][0-9A-F]{2}\\) in ${field.replace(/[[\].]/g, '\\$&')}, which is not accepted$`);

    it('in any string field of any route → 400 naming the field, and nothing is recorded', async () => {
      const jwt = { token: app.adminToken };
      const contact = { email: 'c@example.org' };
      const send = { to: 'to@example.org', fromEmail: sender.from, subject: 's', html: 'h', text: 't' };
      const cases: [string, string, Record<string, unknown>, Record<string, unknown>, string][] = [
        ['POST', '/api/send/transactional', { apiKey: sender.key }, { ...send, subject: 'Hi \ud800' }, 'subject'],
        ['POST', '/api/send/transactional', { apiKey: sender.key }, { ...send, html: '<p>\udfff</p>' }, 'html'],
        ['POST', '/api/send/transactional', { apiKey: sender.key }, { ...send, text: '\ud83d' }, 'text'],
        ['POST', '/api/send/transactional', { apiKey: sender.key }, { ...send, fromName: 'A\ud800' }, 'fromName'],
        ['POST', '/api/send/transactional', { apiKey: sender.key }, { ...send, unsubscribeUrl: 'https://x.example/\ud800' }, 'unsubscribeUrl'],
        ['POST', '/api/send/transactional', { apiKey: sender.key }, { to: 'to@example.org', fromEmail: sender.from, templateId, variables: { name: 'x\ud800' } }, 'variables.name'],
        ['POST', '/api/templates', jwt, { name: 'n', subject: 's\ud800', html: 'h', text: 't' }, 'subject'],
        ['POST', '/api/api-keys', jwt, { name: '\ud800', scopes: ['send'] }, 'name'],
        ['POST', '/api/contacts', { apiKey: contactsKey }, { ...contact, tags: ['ok', 'b\udc00'] }, 'tags[1]'],
        ['POST', '/api/contacts', { apiKey: contactsKey }, { ...contact, firstName: '\ud800' }, 'firstName'],
        ['POST', '/api/contacts/import', { apiKey: contactsKey }, { contacts: [contact], listId: 'list\ud800' }, 'listId'],
        ['POST', '/api/contacts/import', { apiKey: contactsKey }, { contacts: [contact, contact, contact, { ...contact, firstName: '\udbff' }] }, 'contacts[3].firstName'],
        ['POST', '/api/suppressions', jwt, { email: 's@example.org', reason: 'asked\ud800' }, 'reason'],
        ['POST', '/api/auth/signup', {}, { accountName: 'Acme\ud800', email: 'new@example.org', password: 'long-enough-password' }, 'accountName'],
      ];
      const before = await eventCount();
      for (const [method, path, auth, body, field] of cases) {
        // JSON.stringify writes a lone surrogate as the escape `\ud800`, which JSON.parse turns back into one
        const res = await app.request(method, path, { ...auth, body });
        expectBadRequest(res, surrogate(field), `${path} ${field}`);
      }
      expect(await eventCount()).to.equal(before);
    });

    it('in a key → 400 naming the object holding it', async () => {
      const res = await app.request('POST', '/api/send/transactional', {
        apiKey: sender.key,
        body: { to: 'to@example.org', fromEmail: sender.from, templateId, variables: { '\ud800': 'x' } },
      });
      expectBadRequest(res, 'request body contains an unpaired UTF-16 surrogate (U+D800) in a key of variables, which is not accepted', 'key');
    });

    it('a NUL names its field the same way', async () => {
      const res = await app.request('POST', '/api/contacts', { apiKey: contactsKey, body: { email: 'n@example.org', tags: ['a\u0000'] } });
      expectBadRequest(res, 'request body contains a NUL character (U+0000) in tags[0], which is not accepted', 'NUL');
    });

    it('a paired surrogate (an emoji) is ordinary text and is stored as sent', async () => {
      const res = await app.request('POST', '/api/contacts', { apiKey: contactsKey, body: { email: 'emoji@example.org', firstName: 'Ann \ud83d\ude00' } });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body.firstName).to.equal('Ann 😀');
    });

    it('a query string or a path cannot carry one: undecodable UTF-8 is U+FFFD in a query, and 400 in a path', async () => {
      // %ED%A0%80 is U+D800 encoded as UTF-8, which is not valid UTF-8
      const query = await app.request('GET', '/api/contacts?search=%ED%A0%80', { apiKey: contactsKey });
      expect(query.status, JSON.stringify(query.body)).to.equal(200);
      const path = await app.request('GET', '/api/templates/%ED%A0%80', { token: app.adminToken });
      expectBadRequest(path, 'Bad Request', 'path');
    });
  });

  describe('a small request that renders a huge body', () => {
    it('sections nested over a list (400 bytes that would render 100 MB) → 400 naming the field, nothing queued; the server keeps answering', async () => {
      const before = await eventCount();
      const html = `${'{{#a}}'.repeat(7)}xxxxxxxxxx${'{{/a}}'.repeat(7)}`;
      const send = app.request('POST', '/api/send/transactional', {
        apiKey: sender.key,
        body: { to: 'ada@example.org', fromEmail: sender.from, subject: 's', text: 't', html, variables: { a: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] } },
      });
      const health = await app.request('GET', '/healthz');
      expect(health.status).to.equal(200);
      expectBadRequest(await send, /^html: template renders too much/, 'nested sections');
      const subject = await app.request('POST', '/api/send/transactional', {
        apiKey: sender.key,
        body: { to: 'ada@example.org', fromEmail: sender.from, subject: '{{s}}', text: 't', html: 'h', variables: { s: 'x'.repeat(100_000) } },
      });
      expectBadRequest(subject, 'subject: longer than 998 characters once its placeholders are filled', 'a filled subject');
      expect(await eventCount()).to.equal(before);
    });
  });
});
