import { expect } from 'chai';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { z } from 'zod';
import { createApp } from '../../src/http/app.js';
import { buildOpenApi, operationIdOf } from '../../src/http/openapi.js';
import { AUTH_REFUSALS } from '../../src/http/principal.js';
import { defineRoute, type AnyRoute } from '../../src/http/route.js';
import { CSRF_REFUSAL } from '../../src/http/session.js';
import { MAX_ROTATION_DELAY_MS } from '../../src/domain/webhooks/subscription.js';
import { MAX_SCHEDULE_AHEAD_MS } from '../../src/domain/messages/schedule.js';
import { declaredApiRoutes } from '../../scripts/declared-routes.js';

// /docs is the API reference a person browses: it must render /openapi.json with files the service
// serves itself (it works offline), and run under a policy that allows no inline script.

describe('GET /docs (the browsable API reference)', () => {
  let server: Server;
  let base: string;

  before(async () => {
    const ping = defineRoute({
      method: 'get',
      path: '/ping',
      summary: 'a route for the description',
      tag: 'test',
      auth: { kind: 'public' },
      responses: { 200: { description: 'pong' } },
      async handler() {
        return { status: 200, body: { pong: true } };
      },
    });
    const app = createApp({ routes: [ping], authenticate: async () => undefined, logger: pino({ level: 'silent' }), baseUrl: 'http://localhost' });
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise((resolve) => server.close(resolve)));

  const references = (html: string) => [...html.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((m) => m[1]);

  it('answers an HTML page whose every script, style and link is on this origin, with no inline script', async () => {
    const res = await fetch(`${base}/docs`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).to.include("script-src 'self'");
    expect(csp).not.to.match(/script-src[^;]*unsafe-inline/);
    const html = await res.text();
    const refs = references(html);
    expect(refs).to.include.members(['/docs/assets/swagger-ui-bundle.js', '/docs/init.js', '/docs/assets/swagger-ui.css']);
    for (const ref of refs) expect(ref, ref).to.match(/^\/(?!\/)/);
    // every <script> has a src and no body
    for (const [script] of html.matchAll(/<script\b[^>]*>[\s\S]*?<\/script>/g)) expect(script).to.match(/^<script src="[^"]+"><\/script>$/);
  });

  it('serves every file the page references, and the initializer renders /openapi.json', async () => {
    const html = await (await fetch(`${base}/docs`)).text();
    for (const ref of references(html).filter((r) => r.startsWith('/docs/'))) {
      const res = await fetch(base + ref);
      expect(res.status, ref).to.equal(200);
      expect((await res.arrayBuffer()).byteLength, ref).to.be.greaterThan(0);
    }
    const bundle = await fetch(`${base}/docs/assets/swagger-ui-bundle.js`);
    expect(bundle.headers.get('content-type')).to.match(/javascript/);
    expect(await bundle.text()).to.include('SwaggerUIBundle');
    const init = await (await fetch(`${base}/docs/init.js`)).text();
    expect(init).to.include("url: '/openapi.json'");
    const spec = await fetch(`${base}/openapi.json`);
    expect(spec.status).to.equal(200);
    expect((await spec.json()).paths).to.have.property('/ping');
  });

  it('serves no other file of node_modules', async () => {
    for (const path of ['/docs/assets/package.json', '/docs/assets/..%2F..%2Fpackage.json', '/docs/assets/index.html', '/docs/assets/swagger-initializer.js']) {
      const res = await fetch(base + path);
      expect(res.status, path).to.equal(404);
      expect(await res.json()).to.deep.equal({ message: 'Not Found', error: 'Not Found', statusCode: 404 });
    }
  });
});

// /openapi.json is what client developers generate SDKs from: it must say what the service answers,
// including the refusals no route lists by itself, in a form OAS 3.0.3 tools accept.

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('GET /openapi.json (the document SDKs are generated from)', () => {
  const routes = declaredApiRoutes();
  const doc = buildOpenApi(routes, { title: 'Courier Ledger API', version: '0.1.0', baseUrl: 'http://localhost' }) as Json;
  const operations = Object.entries(doc.paths as Json).flatMap(([path, methods]) => Object.entries(methods as Json).map(([method, op]) => ({ path, method, op: op as Json })));
  const operation = (method: string, path: string) => doc.paths[path][method] as Json;
  const responses = operations.flatMap(({ path, method, op }) => Object.entries(op.responses as Json).map(([status, res]) => ({ at: `${method} ${path} ${status}`, status: Number(status), res: res as Json })));
  const exampleValues = (res: Json) => Object.values((res.content?.['application/json']?.examples ?? {}) as Json).map((e) => e.value);
  const messages = (res: Json) => exampleValues(res).map((v) => v.message);

  /** Every Schema Object of the document, with where it is. */
  function schemas(): { at: string; schema: Json }[] {
    const found: { at: string; schema: Json }[] = [];
    const walk = (schema: unknown, at: string) => {
      if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return;
      const s = schema as Json;
      found.push({ at, schema: s });
      for (const [k, v] of Object.entries(s.properties ?? {})) walk(v, `${at}/properties/${k}`);
      for (const k of ['items', 'additionalProperties', 'not']) walk(s[k], `${at}/${k}`);
      for (const k of ['allOf', 'anyOf', 'oneOf']) (s[k] ?? []).forEach((v: unknown, i: number) => walk(v, `${at}/${k}/${i}`));
    };
    for (const { path, method, op } of operations) {
      for (const p of op.parameters ?? []) walk(p.schema, `${method} ${path} parameter ${p.name}`);
      for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) walk((media as Json).schema, `${method} ${path} body ${type}`);
    }
    for (const { at, res } of responses) for (const [type, media] of Object.entries(res.content ?? {})) walk((media as Json).schema, `${at} ${type}`);
    for (const [name, s] of Object.entries(doc.components.schemas)) walk(s, `#/components/schemas/${name}`);
    return found;
  }

  it('is a valid OAS 3.0.3 document (@redocly/openapi-core, which openapi-typescript runs on it)', async () => {
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: 'openapi.json', config: await createConfig({ extends: ['minimal'] }) });
    expect(problems.filter((p) => p.severity === 'error').map((p) => `${p.message} ${p.location[0]?.pointer}`)).to.deep.equal([]);
  });

  it('answers every status of 400 and above with the Error shape, `issues` included, unless the route gives its own body', () => {
    const error = doc.components.schemas.Error;
    expect(error.required).to.deep.equal(['message', 'error', 'statusCode']);
    expect(error.properties.issues.items).to.deep.include({ required: ['field', 'message'] });
    expect(error.properties.issues.items.properties.field).to.deep.include({ type: 'string', nullable: true });
    const own = new Set(routes.flatMap((r) => Object.entries(r.responses).filter(([, res]) => res.schema).map(([status]) => `${r.method} ${r.path.replace(/:(\w+)/g, '{$1}')} ${status}`)));
    const errors = responses.filter(({ at, status }) => status >= 400 && !own.has(at));
    expect(errors.length).to.be.greaterThan(200);
    for (const { at, res } of errors) expect(res.content, at).to.deep.equal({ 'application/json': { schema: { $ref: '#/components/schemas/Error' }, ...(res.content['application/json'].examples ? { examples: res.content['application/json'].examples } : {}) } });
    // a validation example is what the route's schema answers, in the shape the service sends
    const invalid = exampleValues(operation('post', '/api/send/transactional').responses[400]).find((v) => v.issues);
    expect(invalid).to.deep.include({ message: 'to: required', statusCode: 400 });
    expect(invalid.issues).to.deep.include({ field: 'to', message: 'required' });
  });

  it("lists the refusals of a route's authentication, in the words the service uses, and keeps a route's own description", () => {
    const jwtRead = operation('get', '/api/api-keys').responses;
    expect(messages(jwtRead[401])).to.include.members([AUTH_REFUSALS.noSession, AUTH_REFUSALS.passwordChanged, AUTH_REFUSALS.signedOut]);
    expect(messages(jwtRead[403])).to.deep.equal([AUTH_REFUSALS.keyOnDashboardRoute]);
    expect(messages(operation('post', '/api/api-keys').responses[403])).to.deep.equal([AUTH_REFUSALS.keyOnDashboardRoute, CSRF_REFUSAL]);
    const keyed = operation('post', '/api/send/sms').responses;
    expect(keyed[401].description, 'the route\'s own').to.equal('Invalid, expired or revoked key');
    expect(messages(keyed[401])).to.deep.equal([AUTH_REFUSALS.invalidKey, AUTH_REFUSALS.expiredKey, AUTH_REFUSALS.keyAddressDenied]);
    expect(messages(keyed[403])).to.deep.equal([AUTH_REFUSALS.missingScope('sms:send')]);
    expect(messages(keyed[429]).some((m) => m.startsWith('too many failed API key attempts from this address; try again in'))).to.equal(true);
    const either = operation('get', '/api/contacts').responses;
    expect(messages(either[401])).to.include.members([AUTH_REFUSALS.invalidKey, AUTH_REFUSALS.noSession]);
    expect(messages(either[403])).to.deep.equal([AUTH_REFUSALS.missingScope('contacts:read')]);
    expect(either).to.have.property('429');
    for (const { path, method, op } of operations) {
      const r = routes.find((x) => x.method === method && x.path.replace(/:(\w+)/g, '{$1}') === path)!;
      const statuses = Object.keys(op.responses).map(Number);
      if (r.auth.kind !== 'public') expect(statuses, `${method} ${path}`).to.include.members([401, 403]);
      if (r.auth.kind === 'apiKey' || r.auth.kind === 'apiKeyOrJwt') expect(statuses, `${method} ${path}`).to.include(429);
      if (r.body || r.query || r.params) expect(statuses, `${method} ${path}`).to.include(400);
      if (r.body) expect(statuses, `${method} ${path}`).to.include(413);
      else if (r.bodyType !== 'text') expect(statuses, `${method} ${path}`).not.to.include(413);
    }
  });

  it('names X-Request-Id on every response, and Retry-After on every 429, 503 and 409 in the Error shape', () => {
    expect(doc.components.headers.RequestId.schema).to.deep.equal({ type: 'string' });
    for (const { at, status, res } of responses) {
      expect(res.headers['X-Request-Id'], at).to.deep.equal({ $ref: '#/components/headers/RequestId' });
      if ([409, 429, 503].includes(status) && res.content?.['application/json']?.schema?.$ref) expect(res.headers['Retry-After'], at).to.deep.equal({ $ref: '#/components/headers/RetryAfter' });
    }
    expect(responses.filter(({ status }) => status === 429).length).to.be.greaterThan(10);
  });

  it('gives every operation an operationId, unique, of the method and the path', () => {
    const ids = operations.map(({ op }) => op.operationId as string);
    expect(ids.every((id) => /^[a-z]+[A-Z][A-Za-z0-9]*$/.test(id)), ids.join(' ')).to.equal(true);
    expect(new Set(ids).size).to.equal(ids.length);
    expect(operation('post', '/api/send/transactional').operationId).to.equal('postSendTransactional');
    expect(operation('post', '/api/webhooks/{id}/rotate-secret').operationId).to.equal('postWebhooksByIdRotateSecret');
    expect(operation('get', '/api/sandbox/emails/{id}/attachments/{position}').operationId).to.equal('getSandboxEmailsByIdAttachmentsByPosition');
    expect(operationIdOf({ method: 'get', path: '/api/messages', operationId: 'listMessages' })).to.equal('listMessages');
    const twin = { ...routes[0], operationId: 'getHealthz', path: '/twin' } as AnyRoute;
    expect(() => buildOpenApi([routes[0], twin], { title: 't', version: '0', baseUrl: '' })).to.throw(/operationId getHealthz/);
  });

  it('documents the metadata[<key>]=<value> filters as one deepObject parameter, so a client can send any key', () => {
    for (const path of ['/api/messages', '/api/messages/aggregate', '/api/messages/timeseries']) {
      const params = operation('get', path).parameters as Json[];
      expect(params.map((p) => p.name), path).not.to.include('metadata[key]');
      const metadata = params.find((p) => p.name === 'metadata')!;
      expect(metadata, path).to.deep.include({ in: 'query', required: false, style: 'deepObject', explode: true });
      expect(metadata.schema).to.deep.include({ type: 'object', additionalProperties: { type: 'string', maxLength: 256 } });
    }
    expect(operations.flatMap(({ op }) => (op.parameters ?? []).map((p: Json) => p.name)).filter((name: string) => name.includes('['))).to.deep.equal([]);
  });

  it('has Schema Objects with an `example`, never an `examples` list (which OAS 3.0 does not have)', () => {
    const all = schemas();
    expect(all.filter(({ schema }) => 'examples' in schema).map(({ at }) => at)).to.deep.equal([]);
    expect(all.filter(({ schema }) => schema.example !== undefined).length).to.be.greaterThan(30);
    // the media type's own `examples` (a map of named examples) is OAS 3.0's, and stays
    expect(operation('post', '/api/send/sms').responses[409].content['application/json'].examples).to.have.keys('mismatch', 'inProgress');
  });

  it('describes the credentials each route takes: key, bearer or session cookie (with its CSRF header when it changes something), and the routes that check their own', () => {
    expect(doc.components.securitySchemes).to.have.keys('apiKey', 'bearer', 'sessionCookie', 'csrfToken', 'postmarkBasic', 'metricsToken');
    expect(doc.components.securitySchemes.sessionCookie).to.deep.include({ type: 'apiKey', in: 'cookie', name: 'cl_session' });
    expect(doc.components.securitySchemes.csrfToken).to.deep.include({ type: 'apiKey', in: 'header', name: 'X-CSRF-Token' });
    expect(operation('get', '/api/webhooks').security).to.deep.equal([{ bearer: [] }, { sessionCookie: [] }]);
    expect(operation('post', '/api/webhooks').security).to.deep.equal([{ bearer: [] }, { sessionCookie: [], csrfToken: [] }]);
    expect(operation('get', '/api/messages').security).to.deep.equal([{ apiKey: [] }, { bearer: [] }, { sessionCookie: [] }]);
    expect(operation('post', '/api/send/transactional').security).to.deep.equal([{ apiKey: [] }]);
    expect(operation('post', '/api/provider-events/postmark').security).to.deep.equal([{ postmarkBasic: [] }]);
    expect(operation('get', '/metrics').security).to.deep.equal([{ metricsToken: [] }, {}]);
    expect(operation('post', '/api/auth/login').security).to.deep.equal([]);
    for (const { path, method, op } of operations) for (const requirement of op.security) for (const name of Object.keys(requirement)) expect(doc.components.securitySchemes, `${method} ${path}`).to.have.property(name);
  });

  it('marks instants as date-time, a Date of a response schema included', () => {
    const instants = schemas().filter(({ schema }) => typeof schema.pattern === 'string' && schema.pattern.includes('-02-29'));
    expect(instants.length).to.be.greaterThan(10);
    for (const { at, schema } of instants) expect(schema.format, at).to.be.oneOf(['date-time', 'date']);
    const dated = defineRoute({ method: 'get', path: '/dated', summary: 'd', tag: 't', auth: { kind: 'public' }, responses: { 200: { description: 'd', schema: z.object({ at: z.date() }) } }, handler: () => undefined });
    const built = buildOpenApi([dated], { title: 't', version: '0', baseUrl: '' }) as Json;
    expect(built.paths['/dated'].get.responses[200].content['application/json'].schema.properties.at).to.deep.equal({ type: 'string', format: 'date-time' });
  });

  it("has request examples the route's own schema accepts, a scheduled send and a secret's rotation within their limits", () => {
    let checked = 0;
    for (const r of routes.filter((x) => x.body)) {
      const at = `${r.method} ${r.path}`;
      const media = operation(r.method, r.path.replace(/:(\w+)/g, '{$1}')).requestBody.content['application/json'];
      const base = media.example ?? {};
      if (media.example !== undefined) {
        const parsed = r.body!.safeParse(media.example);
        expect(parsed.success, `${at}: ${parsed.error?.message}`).to.equal(true);
        checked++;
      }
      // each field's example, in the body's example (or alone)
      const visit = (schema: Json, path: (string | number)[]) => {
        if (schema.example !== undefined && path.length > 0) {
          const body = structuredClone(base);
          let parent: Json = body;
          for (const step of path.slice(0, -1)) parent = parent?.[step] ?? (typeof step === 'number' ? undefined : (parent[step] = {}));
          if (parent && typeof parent === 'object') {
            parent[path[path.length - 1]] = schema.example;
            const parsed = r.body!.safeParse(body);
            expect(parsed.success, `${at} ${path.join('.')}: ${parsed.error?.message}`).to.equal(true);
            checked++;
          }
        }
        for (const [k, v] of Object.entries(schema.properties ?? {})) visit(v as Json, [...path, k]);
        if (schema.items) visit(schema.items, [...path, 0]);
      };
      visit(media.schema, []);
    }
    expect(checked).to.be.greaterThan(10);
    const sendAt = operation('post', '/api/send/transactional').requestBody.content['application/json'].schema.properties.sendAt.example;
    const ahead = (instant: string) => Date.parse(instant) - Date.now();
    expect(ahead(sendAt)).to.be.within(1, MAX_SCHEDULE_AHEAD_MS);
    const activeAt = operation('post', '/api/webhooks/{id}/rotate-secret').requestBody.content['application/json'].schema.properties.activeAt.example;
    expect(ahead(activeAt)).to.be.within(1, MAX_ROTATION_DELAY_MS);
  });

  it('answers X-Request-Id, as documented', async () => {
    const app = createApp({ routes: [], authenticate: async () => undefined, logger: pino({ level: 'silent' }), baseUrl: 'http://localhost' });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      expect((await fetch(`${base}/openapi.json`)).headers.get('x-request-id')).to.match(/^[\w.-]{1,128}$/);
      expect((await fetch(`${base}/nowhere`, { headers: { 'X-Request-Id': 'req-42' } })).headers.get('x-request-id')).to.equal('req-42');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
