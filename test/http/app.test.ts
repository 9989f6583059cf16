import { expect } from 'chai';
import type { Server } from 'node:http';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { createDb, type Db } from '../../src/adapters/db/knex.js';
import { createPostgresEventStore } from '../../src/adapters/eventstore/postgres-event-store.js';
import { pino } from 'pino';
import { createApp } from '../../src/http/app.js';
import { defineRoute } from '../../src/http/route.js';
import { createHealthRoutes } from '../../src/http/routes/health.js';
import { createLogger } from '../../src/logger.js';
import type { EventStore } from '../../src/ports/event-store.js';
import { createApiServices } from '../../src/services.js';
import { createSharedServices } from '../../src/shared-services.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { freePort } from '../support/spawn-server.js';

const MiB = 1024 * 1024;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
// A V8 stack frame as it would leak into a body: `at fn (/abs/file.ts:1:2)`, `at file:///x.js:1:2`,
// `at node:internal/...:1:2`, also after express's HTML `&nbsp;`.
const STACK_FRAME = /(?:^|[\s;>])at\s+(?:[^\s()]+\s+)?\(?(?:file:\/\/|node:|\/)[^\s)]*:\d+:\d+/m;

interface RawResponse {
  status: number;
  text: string;
  body: any;
  headers: Headers;
}

async function call(baseUrl: string, method: string, path: string, init: { body?: BodyInit; headers?: Record<string, string>; duplex?: 'half'; signal?: AbortSignal } = {}): Promise<RawResponse> {
  const res = await fetch(baseUrl + path, { method, ...init } as RequestInit);
  const text = await res.text();
  // Every response of this file goes through here, so none of them may leak a stack frame.
  expect(text, `${method} ${path} leaked a stack trace`).not.to.match(STACK_FRAME);
  let body: any;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = text;
  }
  return { status: res.status, text, body, headers: res.headers };
}

/**
 * Exactly the API's error shape, nothing more (no `stack`, no `type`, no `expose`), but for the list of
 * every problem (`issues`) that a validation error adds.
 */
function expectErrorShape(res: RawResponse, status: number, error: string): void {
  expect(res.status, res.text).to.equal(status);
  expect(res.headers.get('content-type')).to.match(/^application\/json/);
  expect(res.body).to.be.an('object');
  expect(Object.keys(res.body).filter((k) => k !== 'issues').sort()).to.deep.equal(['error', 'message', 'statusCode']);
  if ('issues' in res.body) {
    expect(res.body.issues).to.be.an('array').that.is.not.empty;
    for (const issue of res.body.issues) expect(Object.keys(issue).sort()).to.deep.equal(['field', 'message']);
  }
  expect(res.body.error).to.equal(error);
  expect(res.body.statusCode).to.equal(status);
  expect(res.body.message).to.be.a('string').and.not.equal('');
}

describe('HTTP skeleton: errors, limits, /healthz, /openapi.json, request ids', function () {
  this.timeout(60_000);
  let app: TestApp;
  let sendKey: string;
  const req = (method: string, path: string, init?: Parameters<typeof call>[3]) => call(app.baseUrl, method, path, init);
  const json = { 'content-type': 'application/json' };

  before(async () => {
    app = await startTestApp();
    sendKey = (await app.createApiKey(['send'])).key;
  });
  after(async () => {
    await app?.close();
  });

  it('the stack-frame guard recognises a real stack (so its silence means something)', () => {
    expect(new Error('boom').stack).to.match(STACK_FRAME);
    expect('<pre>Error: boom<br> &nbsp; &nbsp;at Layer.handle (/srv/node_modules/x/index.js:12:5)</pre>').to.match(STACK_FRAME);
    expect(JSON.stringify({ message: 'look at me: 1:2' })).not.to.match(STACK_FRAME);
  });

  describe('malformed JSON', () => {
    it('POST /api/auth/login with a truncated JSON body → 400 in the error shape', async () => {
      const res = await req('POST', '/api/auth/login', { headers: json, body: '{"email": "admin@localhost", "password": ' });
      expectErrorShape(res, 400, 'Bad Request');
      expect(res.body.message).to.match(/json/i);
    });

    it('POST /api/send/transactional with a valid key and a broken body → 400 in the error shape', async () => {
      const res = await req('POST', '/api/send/transactional', { headers: { ...json, 'x-api-key': sendKey }, body: "{to: 'a@b.c',}" });
      expectErrorShape(res, 400, 'Bad Request');
      expect(res.body.message).to.match(/json/i);
    });

    it('with a bad key, a missing key or a key without the scope, the key is answered first (401 / 403), not the body', async () => {
      const broken = "{to: 'a@b.c',}";
      expectErrorShape(await req('POST', '/api/send/transactional', { headers: { ...json, 'x-api-key': 'not-a-key' }, body: broken }), 401, 'Unauthorized');
      expectErrorShape(await req('POST', '/api/send/transactional', { headers: json, body: broken }), 401, 'Unauthorized');
      const readOnly = (await app.createApiKey(['read_events'])).key;
      expectErrorShape(await req('POST', '/api/send/transactional', { headers: { ...json, 'x-api-key': readOnly }, body: broken }), 403, 'Forbidden');
      // a JWT route alike
      expectErrorShape(await req('POST', '/api/webhooks', { headers: { ...json, authorization: 'Bearer nope' }, body: '{"url":' }), 401, 'Unauthorized');
    });

    it('is parsed as JSON whatever the content type says, so it is still a 400 and not a 500', async () => {
      const res = await req('POST', '/api/auth/login', { headers: { 'content-type': 'text/plain' }, body: '{"email":' });
      expectErrorShape(res, 400, 'Bad Request');
    });
  });

  it('every API answer, error or not, carries a policy under which a browser loads and runs nothing, and no type sniffing', async () => {
    for (const res of [await req('GET', '/healthz'), await req('GET', '/api/does-not-exist'), await req('GET', '/openapi.json')]) {
      expect(res.headers.get('content-security-policy')).to.equal("default-src 'none'; frame-ancestors 'none'");
      expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
    }
  });

  describe('unknown routes', () => {
    it('GET of an unknown path → 404 in the error shape', async () => {
      expectErrorShape(await req('GET', '/api/does-not-exist'), 404, 'Not Found');
      expectErrorShape(await req('GET', '/nothing/here?x=1'), 404, 'Not Found');
    });

    it("a browser's GET of an unknown page (Accept: text/html) → 404 with the dashboard, which says so in its words; an API path keeps the JSON", async () => {
      const browser = { headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' } };
      for (const path of ['/nonexistent', '/messages/']) {
        const res = await req('GET', path, browser);
        expect(res.status, path).to.equal(404);
        expect(res.headers.get('content-type'), path).to.match(/^text\/html/);
        expect(res.text, path).to.include('<div id="app">');
      }
      expectErrorShape(await req('GET', '/api/does-not-exist', browser), 404, 'Not Found');
      expectErrorShape(await req('GET', '/docs/assets/none.js', browser), 404, 'Not Found');
    });

    it('POST of an unknown path (with a JSON body, or a broken one) → 404 in the error shape', async () => {
      expectErrorShape(await req('POST', '/api/does-not-exist', { headers: json, body: '{"a":1}' }), 404, 'Not Found');
      // no body parser runs for an unmatched route, so a broken body cannot turn this into a 400
      expectErrorShape(await req('POST', '/api/does-not-exist', { headers: json, body: '{"a":' }), 404, 'Not Found');
    });

    it('a known path with a method it does not serve → 404 in the error shape', async () => {
      expectErrorShape(await req('POST', '/healthz', { headers: json, body: '{}' }), 404, 'Not Found');
      expectErrorShape(await req('DELETE', '/api/send/transactional', { headers: { 'x-api-key': sendKey } }), 404, 'Not Found');
    });
  });

  describe('body size limit (10 MB)', () => {
    it('a declared body over 10 MB → 413 in the error shape', async () => {
      const res = await req('POST', '/api/auth/login', { headers: json, body: Buffer.alloc(10 * MiB + 1, 0x20) });
      expectErrorShape(res, 413, 'Payload Too Large');
    });

    it('a chunked body (no Content-Length) that grows over 10 MB → 413 in the error shape', async () => {
      const chunk = new Uint8Array(MiB).fill(0x20);
      let sent = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent > 11) return controller.close();
          sent++;
          controller.enqueue(chunk);
        },
      });
      const res = await req('POST', '/api/auth/login', { headers: json, body: stream, duplex: 'half' });
      expectErrorShape(res, 413, 'Payload Too Large');
    });

    it('a body just under 10 MB is read and validated (400 from zod), not refused as too large', async () => {
      const padding = 'x'.repeat(9_900_000);
      const res = await req('POST', '/api/auth/login', { headers: json, body: JSON.stringify({ email: 'admin@localhost', password: padding }) });
      expectErrorShape(res, 400, 'Bad Request');
      expect(res.body.message).to.match(/^password: /);
    });
  });

  describe('zod validation', () => {
    it('a body that fails the route schema → 400 naming the field', async () => {
      const res = await req('POST', '/api/auth/login', { headers: json, body: JSON.stringify({ email: 'not-an-email', password: 'x' }) });
      expectErrorShape(res, 400, 'Bad Request');
      expect(res.body.message).to.match(/^email: /);
    });

    it('a body with several problems → 400 whose message names the first and whose `issues` lists every one', async () => {
      const res = await req('POST', '/api/send/transactional', {
        headers: { ...json, 'x-api-key': sendKey },
        body: JSON.stringify({ to: 'not-an-email', fromEmail: 'b@example.org', html: 'h', text: 't', bogus: 1 }),
      });
      expectErrorShape(res, 400, 'Bad Request');
      expect(res.body).to.deep.equal({
        message: 'to: Invalid email address',
        error: 'Bad Request',
        statusCode: 400,
        issues: [
          { field: 'to', message: 'Invalid email address' },
          { field: 'bogus', message: 'unknown field' },
          { field: 'subject', message: 'subject is required unless templateId is given' },
        ],
      });
    });

    it("a field left out reads 'required'; a sender written as `Name <address>` is told where the name goes", async () => {
      const res = await req('POST', '/api/send/transactional', {
        headers: { ...json, 'x-api-key': sendKey },
        body: JSON.stringify({ fromEmail: 'Acme <news@example.org>', subject: 's', html: 'h', text: 't' }),
      });
      expectErrorShape(res, 400, 'Bad Request');
      expect(res.body.issues).to.deep.equal([
        { field: 'to', message: 'required' },
        { field: 'fromEmail', message: 'must be the address alone (news@acme.test): a display name goes in fromName' },
      ]);
    });

    it('a problem with the body as a whole is listed with field null', async () => {
      const res = await req('POST', '/api/auth/login', { headers: json, body: '[1,2]' });
      expectErrorShape(res, 400, 'Bad Request');
      expect(res.body.issues).to.deep.equal([{ field: null, message: res.body.message }]);
    });

    it('a JSON body of the wrong type (an array, a bare string) → 400, not a 500', async () => {
      expectErrorShape(await req('POST', '/api/auth/login', { headers: json, body: '[1,2]' }), 400, 'Bad Request');
      expectErrorShape(await req('POST', '/api/auth/login', { headers: json, body: '"hello"' }), 400, 'Bad Request');
    });

    it('a NUL character (U+0000) in a body or query string → 400 naming where, in a path → 404; never a 500 from the database', async () => {
      const contacts = (await app.createApiKey(['contacts:read', 'contacts:write'])).key;
      const reads = (await app.createApiKey(['read_events'])).key;
      const cases: [string, string, Record<string, string>, string | undefined, RegExp][] = [
        ['POST', '/api/contacts', { 'x-api-key': contacts }, JSON.stringify({ email: 'a@example.org', firstName: 'A\u0000B' }), /^request body contains a NUL/],
        ['POST', '/api/contacts/import', { 'x-api-key': contacts }, JSON.stringify({ contacts: [{ email: 'a@example.org', tags: ['x\u0000'] }] }), /^request body /],
        ['POST', '/api/send/transactional', { 'x-api-key': sendKey }, JSON.stringify({ to: 'a@example.org', fromEmail: 'b@example.org', subject: '\u0000', html: 'h', text: 't' }), /^request body /],
        ['GET', '/api/contacts?search=%00', { 'x-api-key': contacts }, undefined, /^query string contains a NUL/],
        ['GET', '/api/messages?search=a%00b', { 'x-api-key': reads }, undefined, /^query string /],
      ];
      for (const [method, path, headers, body, message] of cases) {
        const res = await req(method, path, { headers: { ...json, ...headers }, body });
        expectErrorShape(res, 400, 'Bad Request');
        expect(res.body.message, `${method} ${path}`).to.match(message);
      }
      // no resource has a NUL in its id: 404, as for any unknown id
      const path = await req('GET', '/api/templates/abc%00', { headers: { authorization: `Bearer ${app.adminToken}` } });
      expectErrorShape(path, 404, 'Not Found');
      // the escaped text "\\u0000" (a backslash, then u0000) is ordinary text and is stored as sent
      const ok = await req('POST', '/api/contacts', { headers: { ...json, 'x-api-key': contacts }, body: JSON.stringify({ email: 'nul@example.org', firstName: '\\u0000' }) });
      expect(ok.status, ok.text).to.equal(201);
      expect(ok.body.firstName).to.equal('\\u0000');
    });

    it('an unknown field on a strict schema → 400 whose message and issue name the field alike (send, with a valid key; a nested object)', async () => {
      const res = await req('POST', '/api/send/transactional', {
        headers: { ...json, 'x-api-key': sendKey },
        body: JSON.stringify({ to: 'a@example.org', fromEmail: 'b@example.org', subject: 's', html: 'h', text: 't', bogus: 1 }),
      });
      expectErrorShape(res, 400, 'Bad Request');
      expect(res.body).to.include({ message: 'bogus: unknown field' });
      expect(res.body.issues).to.deep.equal([{ field: 'bogus', message: 'unknown field' }]);
      const nested = await req('POST', '/api/campaigns', {
        headers: { ...json, authorization: `Bearer ${app.adminToken}` },
        body: JSON.stringify({ name: 'c', templateId: 't', fromEmail: 'b@example.org', audience: { all: true } }),
      });
      expectErrorShape(nested, 400, 'Bad Request');
      expect(nested.body.message).to.equal('audience.all: unknown field');
    });

    it('every body is strict: a misspelt field is refused, never dropped (a key asked for with ipAllowList would have none)', async () => {
      const admin = { ...json, authorization: `Bearer ${app.adminToken}` };
      const cases: [string, Record<string, unknown>, string][] = [
        ['/api/api-keys', { name: 'typo', scopes: ['send'], ipAllowList: ['10.9.9.9'] }, 'ipAllowList'],
        ['/api/api-keys', { name: 'typo', scopes: ['send'], daily_limit: 1 }, 'daily_limit'],
        ['/api/domains', { domain: 'strict.example', foo: 1 }, 'foo'],
        ['/api/senders', { email: 'me@strict.example', foo: 1 }, 'foo'],
        ['/api/auth/login', { email: 'admin@localhost', password: 'x', remember: true }, 'remember'],
      ];
      for (const [path, body, field] of cases) {
        const res = await req('POST', path, { headers: admin, body: JSON.stringify(body) });
        expect(res.status, `${path} ${res.text}`).to.equal(400);
        expect(res.body.issues, path).to.deep.include({ field, message: 'unknown field' });
      }
      expect((await app.request('GET', '/api/api-keys', { token: app.adminToken })).body.items.map((k: { name: string }) => k.name)).not.to.include('typo');
    });
  });

  describe('GET /healthz', () => {
    it('→ 200 {status:"ok"} when the stores are reachable', async () => {
      const res = await req('GET', '/healthz');
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ status: 'ok' });
    });

    /** The health route alone, served over HTTP, on the stores given. */
    async function healthz(stores: { db: Db; eventStore: EventStore }): Promise<{ res: RawResponse; ms: number }> {
      const probe = createApp({
        routes: createHealthRoutes(stores),
        authenticate: async () => undefined,
        logger: createLogger('silent'),
        baseUrl: 'http://127.0.0.1',
      });
      const server: Server = await new Promise((resolve) => {
        const s = probe.listen(0, '127.0.0.1', () => resolve(s));
      });
      try {
        const started = Date.now();
        // fail with a message of our own rather than the mocha timeout if the probe hangs
        const res = await call(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, 'GET', '/healthz', { signal: AbortSignal.timeout(15_000) });
        return { res, ms: Date.now() - started };
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    }

    it('→ 503 {status:"unavailable"} when the database and event store refuse connections', async () => {
      // Nothing listens on a port that was just freed.
      const deadUrl = `postgres://postgres@127.0.0.1:${await freePort()}/nowhere`;
      const db = createDb(deadUrl);
      const eventStore = createPostgresEventStore({ connectionString: deadUrl });
      try {
        const { res, ms } = await healthz({ db, eventStore });
        expect(res.status).to.equal(503);
        expect(res.body).to.deep.equal({ status: 'unavailable' });
        expect(ms).to.be.below(10_000);
      } finally {
        await eventStore.close();
        await db.destroy();
      }
    });

    it('→ 503 promptly when the event store accepts connections but never answers (database fine)', async () => {
      // A black hole: TCP connects, the PostgreSQL handshake never completes.
      const sockets = new Set<Socket>();
      const hole = createServer((socket) => {
        sockets.add(socket);
        socket.on('error', () => {});
      });
      await new Promise<void>((resolve) => hole.listen(0, '127.0.0.1', () => resolve()));
      const eventStore = createPostgresEventStore({ connectionString: `postgres://postgres@127.0.0.1:${(hole.address() as AddressInfo).port}/mute` });
      try {
        const { res, ms } = await healthz({ db: app.infra.db, eventStore });
        expect(res.status).to.equal(503);
        expect(res.body).to.deep.equal({ status: 'unavailable' });
        // orchestrators give a probe seconds, not minutes
        expect(ms).to.be.below(10_000);
      } finally {
        for (const socket of sockets) socket.destroy();
        await new Promise<void>((resolve) => hole.close(() => resolve()));
        await eventStore.close();
      }
    });
  });

  describe('GET /openapi.json', () => {
    let doc: any;
    before(async () => {
      const res = await req('GET', '/openapi.json');
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^application\/json/);
      doc = res.body;
    });

    it('is an OpenAPI 3 document', () => {
      expect(doc.openapi).to.match(/^3\./);
      expect(doc.info).to.include({ title: 'Courier Ledger API' });
      expect(doc.paths).to.be.an('object');
    });

    it('lists the contract routes, with path parameters in OpenAPI form', () => {
      expect(doc.paths).to.include.all.keys(
        '/api/send/transactional',
        '/api/send/sms',
        '/api/messages',
        '/api/messages/{id}',
        '/api/contacts',
        '/api/contacts/import',
        '/api/api-keys',
        '/api/webhooks',
        '/api/suppressions',
        '/healthz',
      );
      expect(doc.paths['/api/send/transactional']).to.have.property('post');
      expect(doc.paths['/api/messages/{id}']).to.have.property('get');
      const [idParam] = doc.paths['/api/messages/{id}'].get.parameters;
      expect(idParam).to.include({ name: 'id', in: 'path', required: true });
      expect(idParam.schema).to.include({ type: 'string' });
      expect(Object.keys(doc.paths).filter((p) => p.includes(':'))).to.deep.equal([]);
    });

    it('documents every method+path the express app actually serves, and nothing it does not', async () => {
      // A second wiring of the same services: the express router is the ground truth of what is served.
      const logger = createLogger('silent');
      const served = await createApiServices(app.config, app.infra, logger, createSharedServices(app.config, app.infra, logger));
      const routes: string[] = [];
      for (const layer of (served.app as any).router.stack) {
        if (!layer.route) continue;
        for (const method of Object.keys(layer.route.methods)) routes.push(`${method} ${layer.route.path.replace(/:(\w+)/g, '{$1}')}`);
      }
      // /openapi.json is the document itself
      const expected = routes.filter((r) => r !== 'get /openapi.json').sort();
      const documented = Object.entries(doc.paths)
        .flatMap(([path, ops]) => Object.keys(ops as object).map((method) => `${method} ${path}`))
        .sort();
      expect(expected.length).to.be.above(30);
      expect(documented).to.deep.equal(expected);
    });

    it('request bodies are the JSON Schema of the zod schemas the routes validate with', () => {
      const login = doc.paths['/api/auth/login'].post.requestBody.content['application/json'].schema;
      expect(login.type).to.equal('object');
      expect(login.required).to.have.members(['email', 'password']);
      expect(login.properties.password).to.include({ type: 'string', minLength: 1, maxLength: 1024 });
      expect(login.properties.email).to.include({ type: 'string', maxLength: 320 });

      const send = doc.paths['/api/send/transactional'].post.requestBody.content['application/json'].schema;
      expect(send.required).to.have.members(['to', 'fromEmail']);
      // `.strict()` in zod
      expect(send.additionalProperties).to.equal(false);
      expect(send.properties.to).to.include({ type: 'string', format: 'email', maxLength: 320 });
      expect(send.properties).to.include.all.keys('fromEmail', 'subject', 'html', 'text', 'templateId', 'variables', 'unsubscribeUrl');

      for (const path of ['/api/send/sms', '/api/contacts', '/api/contacts/import', '/api/api-keys', '/api/webhooks', '/api/suppressions']) {
        const schema = doc.paths[path].post?.requestBody?.content?.['application/json']?.schema;
        expect(schema, `POST ${path} request schema`).to.be.an('object');
        expect(schema.type, path).to.equal('object');
        expect(schema.properties, path).to.be.an('object').that.is.not.empty;
      }
      expect(doc.paths['/api/messages'].get.parameters.map((p: any) => p.in)).to.include('query');
    });
  });

  describe('request id', () => {
    it('each response carries a fresh UUID X-Request-Id when none was sent', async () => {
      const a = await req('GET', '/healthz');
      const b = await req('GET', '/healthz');
      expect(a.headers.get('x-request-id')).to.match(UUID);
      expect(b.headers.get('x-request-id')).to.match(UUID);
      expect(a.headers.get('x-request-id')).not.to.equal(b.headers.get('x-request-id'));
    });

    it('a well-formed incoming X-Request-Id is echoed back, also on error responses', async () => {
      expect((await req('GET', '/healthz', { headers: { 'x-request-id': 'lb-1234.abc_DEF' } })).headers.get('x-request-id')).to.equal('lb-1234.abc_DEF');
      const notFound = await req('GET', '/api/nope', { headers: { 'x-request-id': 'trace-404' } });
      expect(notFound.status).to.equal(404);
      expect(notFound.headers.get('x-request-id')).to.equal('trace-404');
      const bad = await req('POST', '/api/auth/login', { headers: { ...json, 'x-request-id': 'trace-400' }, body: '{' });
      expect(bad.status).to.equal(400);
      expect(bad.headers.get('x-request-id')).to.equal('trace-400');
    });

    it('an incoming id that is too long or has unsafe characters is replaced by a UUID', async () => {
      for (const incoming of ['x'.repeat(129), 'has space', 'semi;colon', '<script>']) {
        const res = await req('GET', '/healthz', { headers: { 'x-request-id': incoming } });
        expect(res.headers.get('x-request-id'), incoming).to.match(UUID);
      }
      expect((await req('GET', '/healthz', { headers: { 'x-request-id': 'y'.repeat(128) } })).headers.get('x-request-id')).to.equal('y'.repeat(128));
    });
  });
});

describe('request log', () => {
  async function serve(level: string) {
    const lines: any[] = [];
    const logger = pino({ level }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const routes = [
      defineRoute({ method: 'get', path: '/ok', summary: 'ok', tag: 't', auth: { kind: 'public' }, responses: {}, handler: () => ({ status: 200, body: {} }) }),
      defineRoute({ method: 'get', path: '/boom', summary: 'boom', tag: 't', auth: { kind: 'public' }, responses: {}, handler: () => Promise.reject(new Error('boom')) }),
      defineRoute({ method: 'get', path: '/people/:email/things/:id', summary: 'person', tag: 't', auth: { kind: 'public' }, responses: {}, handler: () => ({ status: 200, body: {} }) }),
      defineRoute({ method: 'get', path: '/u/:token', summary: 'token', tag: 't', auth: { kind: 'public' }, responses: {}, handler: () => Promise.reject(new Error('boom')) }),
      defineRoute({
        method: 'get',
        path: '/session',
        summary: 'session',
        tag: 't',
        auth: { kind: 'public' },
        responses: {},
        handler: ({ res }) => (res.cookie('cl_session', 'secret-session-jwt'), res.cookie('cl_csrf', 'secret-csrf'), { status: 200, body: {} }),
      }),
    ];
    const app = createApp({ routes, authenticate: async () => undefined, logger, baseUrl: 'http://localhost' });
    const server: Server = await new Promise((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return { lines, get: (path: string, headers: Record<string, string> = {}) => call(baseUrl, 'GET', path, { headers }), close: () => new Promise((r) => server.close(r)) };
  }

  it('at info, one line per request with its id and status, with the API key and authorization redacted', async () => {
    const s = await serve('info');
    try {
      const res = await s.get('/ok', { 'x-request-id': 'trace-1', 'x-api-key': 'secret-key', authorization: 'Bearer secret-token' });
      expect(res.headers.get('x-request-id')).to.equal('trace-1');
      expect(res.headers.get('etag')).to.equal(null);
      await s.get('/boom', { 'x-request-id': 'trace-2' });
      const requests = s.lines.filter((l) => l.res);
      expect(requests.map((l) => [l.req.id, l.res.statusCode, l.level])).to.deep.equal([
        ['trace-1', 200, 30],
        ['trace-2', 500, 50],
      ]);
      // a session: the cookies it sets, and those and the CSRF token the next request sends back
      await s.get('/session', { 'x-request-id': 'trace-3', cookie: 'cl_session=secret-session-jwt', 'x-csrf-token': 'secret-csrf' });
      expect(s.lines.find((l) => l.req?.id === 'trace-3')?.res.headers['set-cookie']).to.equal('[Redacted]');
      expect(requests[0].req.headers['x-api-key']).to.equal('[Redacted]');
      expect(requests[0].req.headers.authorization).to.equal('[Redacted]');
      expect(JSON.stringify(s.lines)).not.to.include('secret-');
      // the failure itself, logged with its request
      expect(s.lines.find((l) => l.msg === 'unhandled error')).to.nested.include({ 'req.id': 'trace-2', 'err.message': 'boom' });
    } finally {
      await s.close();
    }
  });

  it('names neither a person nor a secret: personal path parameters and every query value are logged by name', async () => {
    const s = await serve('info');
    try {
      await s.get('/people/ada%40example.org/things/t-42?search=ada@example.org&limit=10', { 'x-request-id': 'p-1' });
      await s.get('/u/unsubscribe-capability', { 'x-request-id': 'p-2' });
      await s.get('/ok?u=https%3A%2F%2Fexample.org%2F%3Fwho%3Dada', { 'x-request-id': 'p-3' });
      const urls = Object.fromEntries(s.lines.filter((l) => l.res).map((l) => [l.req.id, l.req.url]));
      expect(urls).to.deep.equal({
        'p-1': '/people/:email/things/t-42?search=…&limit=…',
        'p-2': '/u/:token',
        'p-3': '/ok?u=…',
      });
      const logged = JSON.stringify(s.lines);
      // the failed request's own error line too
      expect(s.lines.filter((l) => l.req?.id === 'p-2')).to.have.length(2);
      for (const secret of ['ada', 'unsubscribe-capability']) expect(logged).not.to.include(secret);
    } finally {
      await s.close();
    }
  });

  it('silent: nothing is written, and responses still carry the request id', async () => {
    const s = await serve('silent');
    try {
      expect((await s.get('/ok', { 'x-request-id': 'trace-3' })).headers.get('x-request-id')).to.equal('trace-3');
      expect((await s.get('/boom')).headers.get('x-request-id')).to.match(UUID);
      expect(s.lines).to.deep.equal([]);
    } finally {
      await s.close();
    }
  });
});
