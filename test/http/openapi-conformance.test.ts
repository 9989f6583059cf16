import { expect } from 'chai';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually } from '../support/email-setup.js';
import { postmark, sesEvent } from '../support/provider-events-payloads.js';
import { SNS_TEST_TOPIC_ARN, signedSnsNotification, startSnsCertServer, type SnsCertServer } from '../support/sns-signing.js';
import { startScriptedReceiver, type ScriptedReceiver } from '../support/webhook-receiver.js';

// Client developers generate SDKs from /openapi.json: an answer that strays from its schema breaks
// them at run time, far from here. A realistic flow over the API checks every 2xx answer it gets
// against the schema the served document gives for that operation and status.

type Schema = Record<string, any>;
type Answer = Awaited<ReturnType<TestApp['request']>>;
interface Operation {
  responses: Record<string, { description: string; content?: Record<string, { schema?: Schema }> }>;
}
interface Doc {
  paths: Record<string, Record<string, Operation>>;
}

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete'];
const POSTMARK = { user: 'pm-hook', password: 'pm-secret-password' };

/** The node a local `$ref` (`#/components/schemas/Error`) points to. */
function pointee(doc: unknown, ref: string): Schema {
  if (!ref.startsWith('#/')) throw new Error(`only local references are resolved: ${ref}`);
  return ref
    .slice(2)
    .split('/')
    .map((part) => decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((node: any, key) => node?.[key], doc);
}

/**
 * The schema with its references resolved and every object closed (additionalProperties: false
 * where it says nothing). The document leaves objects open, so that a field added later does not
 * break a client that validates; this test holds the server to the fields the document names.
 * Branches of an allOf stay open, as each names only its part of the object.
 */
function closed(doc: unknown, schema: Schema, inAllOf = false, depth = 0): Schema {
  if (depth > 50) throw new Error('a schema nested 50 deep: a reference cycle?');
  if (schema.$ref) return closed(doc, pointee(doc, schema.$ref), inAllOf, depth + 1);
  const out: Schema = { ...schema };
  const sub = (s: Schema, allOf = false) => closed(doc, s, allOf, depth + 1);
  if (out.properties) out.properties = Object.fromEntries(Object.entries(out.properties as Record<string, Schema>).map(([k, v]) => [k, sub(v)]));
  if (out.items) out.items = sub(out.items);
  if (out.anyOf) out.anyOf = out.anyOf.map((s: Schema) => sub(s));
  if (out.oneOf) out.oneOf = out.oneOf.map((s: Schema) => sub(s));
  if (out.allOf) out.allOf = out.allOf.map((s: Schema) => sub(s, true));
  if (out.not) out.not = sub(out.not);
  if (out.additionalProperties && typeof out.additionalProperties === 'object') out.additionalProperties = sub(out.additionalProperties);
  if (out.type === 'object' && !('additionalProperties' in out) && !inAllOf) out.additionalProperties = false;
  // OAS 3.0 writes an exclusive bound as a flag on minimum or maximum (JSON Schema draft 4); ajv reads draft 7
  for (const [flag, bound] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']] as const) {
    if (typeof out[flag] !== 'boolean') continue;
    if (out[flag]) {
      out[flag] = out[bound];
      delete out[bound];
    } else delete out[flag];
  }
  return out;
}

/** Every schema node under `schema`, with where it is. */
function* nodes(schema: unknown, at: string): Generator<[Schema, string]> {
  if (!schema || typeof schema !== 'object') return;
  if (Array.isArray(schema)) {
    for (const [i, s] of schema.entries()) yield* nodes(s, `${at}/${i}`);
    return;
  }
  yield [schema as Schema, at];
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'example' || key === 'examples') continue;
    yield* nodes(value, `${at}/${key}`);
  }
}

/** ajv's errors with the field each one is about (`must NOT have additional properties` names none) */
const described = (errors: ErrorObject[] | null | undefined) =>
  (errors ?? []).map((e) => `${e.instancePath || '(the body)'} ${e.message} ${JSON.stringify(e.params)}`).join('\n');

const isJson = (mediaType: string) => /^application\/(?:[\w.+-]+\+)?json$/.test(mediaType);
/** A declared media type (`image/gif`, `*\/*`, `text/*`) matches a Content-Type header. */
const mediaMatches = (declared: string, header: string) => {
  const actual = header.split(';')[0].trim().toLowerCase();
  const [type, subtype] = declared.split(';')[0].trim().toLowerCase().split('/');
  const [aType, aSubtype] = actual.split('/');
  return (type === '*' || type === aType) && (subtype === '*' || subtype === aSubtype);
};

describe('/openapi.json describes every 2xx answer the API gives (contract)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let doc: Doc;
  let ajv: Ajv;
  let receiver: ScriptedReceiver;
  let sns: SnsCertServer;
  const validators = new Map<string, ValidateFunction>();
  /** `GET /api/messages/{id} 200` for every answer the flow has checked */
  const checked = new Set<string>();
  /** a body of each operation as answered, for the checks' own test */
  const answered = new Map<string, unknown>();

  /** The document's path template that `path` is an instance of: a literal segment before a parameter. */
  function templateOf(method: string, path: string): string {
    const bare = path.split('?')[0];
    const candidates = Object.keys(doc.paths)
      .filter((t) => doc.paths[t][method])
      .filter((t) => new RegExp(`^${t.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`).test(bare))
      .sort((a, b) => (a.match(/\{/g)?.length ?? 0) - (b.match(/\{/g)?.length ?? 0));
    if (!candidates.length) throw new Error(`${method.toUpperCase()} ${bare} is in no path of the document`);
    return candidates[0];
  }

  function validatorFor(key: string, schema: Schema): ValidateFunction {
    let validate = validators.get(key);
    if (!validate) {
      validate = ajv.compile(closed(doc, schema));
      validators.set(key, validate);
    }
    return validate;
  }

  /** Checks a 2xx answer against the document; any other status passes through untouched. */
  function conforms(method: string, path: string, res: { status: number; headers: Headers; body: unknown; text: string }) {
    if (res.status < 200 || res.status >= 300) return;
    const m = method.toLowerCase();
    const template = templateOf(m, path);
    const operation = `${method.toUpperCase()} ${template}`;
    const declared = doc.paths[template][m].responses[String(res.status)];
    expect(declared, `${operation} answered ${res.status}, a status the document does not list`).to.exist;
    const content = declared.content ?? {};
    if (res.status === 204 || m === 'head' || res.text === '') {
      expect(res.text, `${operation} ${res.status}: a body where the document has none`).to.equal('');
    } else {
      const header = res.headers.get('content-type') ?? '';
      const mediaType = Object.keys(content).find((t) => mediaMatches(t, header));
      expect(mediaType, `${operation} ${res.status} answered ${header}; the document says ${Object.keys(content).join(', ') || 'nothing'}`).to.be.a('string');
      if (isJson(header.split(';')[0].trim())) {
        const schema = content[mediaType!].schema;
        expect(schema, `${operation} ${res.status} answers JSON with no schema in the document`).to.exist;
        const validate = validatorFor(`${operation} ${res.status}`, schema!);
        if (!validate(res.body)) {
          expect.fail(`${operation} ${res.status} does not match its schema:\n${described(validate.errors)}\n${JSON.stringify(res.body, null, 2).slice(0, 3000)}`);
        }
        answered.set(`${operation} ${res.status}`, res.body);
      }
    }
    checked.add(`${operation} ${res.status}`);
  }

  /** app.request, its answer checked against the document */
  async function call(method: string, path: string, options: Parameters<TestApp['request']>[2] = {}): Promise<Answer> {
    const res = await app.request(method, path, options);
    conforms(method, path, res);
    return res;
  }
  /** a dashboard call (the admin's JWT) that must answer `status` */
  async function admin(method: string, path: string, body?: unknown, status?: number): Promise<any> {
    const res = await call(method, path, { token: app.adminToken, body });
    if (status !== undefined) expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).to.equal(status);
    return res.body;
  }
  /** a raw fetch for what app.request cannot send (cookies, forms, binary answers), checked the same */
  async function fetched(method: string, path: string, init: RequestInit = {}) {
    const res = await fetch(app.baseUrl + path, { method, redirect: 'manual', ...init });
    const text = method === 'HEAD' ? '' : Buffer.from(await res.arrayBuffer()).toString('latin1');
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON */
    }
    conforms(method, path, { status: res.status, headers: res.headers, body, text });
    return { status: res.status, headers: res.headers, body: body as any, text };
  }

  before(async () => {
    receiver = await startScriptedReceiver([200]);
    sns = await startSnsCertServer();
    app = await startTestApp({
      CAMPAIGN_TIMER_INTERVAL_MS: '200',
      POSTMARK_WEBHOOK_USER: POSTMARK.user,
      POSTMARK_WEBHOOK_PASSWORD: POSTMARK.password,
      SNS_CERT_URL_PATTERN: sns.pattern.source,
      SNS_TOPIC_ARNS: SNS_TEST_TOPIC_ARN,
    });
    doc = (await app.request('GET', '/openapi.json')).body;
    ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false });
    addFormats.default(ajv);
    // OAS 3.0's own annotation; ajv knows `nullable` already
    ajv.addKeyword('example');
  });
  after(async () => {
    await app?.close();
    await receiver?.close();
    await sns?.close();
  });

  it('declares the media type of every 2xx answer with a body, a schema for every JSON one, and null in every nullable enum', () => {
    const problems: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const method of METHODS.filter((m) => operations[m])) {
        for (const [status, response] of Object.entries(operations[method].responses)) {
          if (!/^2\d\d$/.test(status) || status === '204' || method === 'head') continue;
          const operation = `${method.toUpperCase()} ${path} ${status}`;
          if (!response.content) problems.push(`${operation}: no content`);
          for (const [mediaType, media] of Object.entries(response.content ?? {})) {
            if (isJson(mediaType) && !media.schema) problems.push(`${operation}: ${mediaType} without a schema`);
          }
        }
      }
    }
    // OAS 3.0.3: `nullable` admits null to an enum only when the enum lists it
    for (const [node, at] of nodes(doc.paths, '#/paths')) {
      if (node.nullable === true && Array.isArray(node.enum) && !node.enum.includes(null)) problems.push(`${at}: a nullable enum without null`);
    }
    expect(problems).to.deep.equal([]);
  });

  it('gives every documented example in a 2xx schema the shape of its schema', () => {
    const problems: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const method of METHODS.filter((m) => operations[m])) {
        for (const [status, response] of Object.entries(operations[method].responses)) {
          if (!/^2\d\d$/.test(status)) continue;
          const schema = response.content?.['application/json']?.schema;
          for (const [node, at] of nodes(schema, `${method.toUpperCase()} ${path} ${status}`)) {
            const examples = [...('example' in node ? [node.example] : []), ...(Array.isArray(node.examples) ? node.examples : [])];
            if (!examples.length) continue;
            const validate = ajv.compile(closed(doc, node));
            for (const example of examples) if (!validate(example)) problems.push(`${at}: ${described(validate.errors)}`);
          }
        }
      }
    }
    expect(problems).to.deep.equal([]);
  });

  it('answers the flow of a dashboard user and an API client as the document says', async () => {
    // health and metrics
    await call('GET', '/healthz');
    await call('GET', '/readyz');
    await call('GET', '/metrics');

    // auth: a second account, signed in every way, changes its password
    const owner = { email: 'owner@contract.example.net', password: 'correct-horse-battery' };
    const signup = await call('POST', '/api/auth/signup', { body: { accountName: 'contract', ...owner } });
    expect(signup.status).to.equal(201);
    const login = await call('POST', '/api/auth/login', { body: owner });
    expect(login.status).to.equal(200);
    const session = await fetched('POST', '/api/auth/session', { headers: { 'content-type': 'application/json' }, body: JSON.stringify(owner) });
    expect(session.status).to.equal(200);
    const cookies = session.headers.getSetCookie().map((c) => c.split(';')[0]);
    expect((await fetched('GET', '/api/auth/session', { headers: { cookie: cookies.join('; ') } })).status).to.equal(200);
    const changed = await call('POST', '/api/auth/password', { token: login.body.token, body: { currentPassword: owner.password, newPassword: 'another-long-password' } });
    expect(changed.status).to.equal(200);

    // settings
    await admin('GET', '/api/settings/providers', undefined, 200);
    await admin('GET', '/api/settings', undefined, 200);
    await admin('PATCH', '/api/settings', { dailySendCap: 900, providerRatePerSecond: 50, retentionDays: 365 }, 200);
    await admin('GET', '/api/settings/sms', undefined, 200);
    await admin('PUT', '/api/settings/sms', { enabled: true, originationNumber: '+18445550100', sandbox: false, sandboxDestinations: [] }, 200);

    // identities (the sandbox provider verifies at once) and keys
    const domain = await admin('POST', '/api/domains', { domain: 'contract.example.com' }, 201);
    await admin('POST', `/api/domains/${domain.id}/verify`, undefined, 200);
    await admin('GET', '/api/domains', undefined, 200);
    const spare = await admin('POST', '/api/domains', { domain: 'spare.example.com' }, 201);
    await admin('DELETE', `/api/domains/${spare.id}`, undefined, 204);
    const sender = await admin('POST', '/api/senders', { email: 'billing@elsewhere.example.org' }, 201);
    await admin('POST', `/api/senders/${sender.id}/verify`, undefined, 200);
    await admin('GET', '/api/senders', undefined, 200);
    await admin('DELETE', `/api/senders/${sender.id}`, undefined, 204);
    const from = 'hello@contract.example.com';
    const key = (await admin('POST', '/api/api-keys', { name: 'checkout', scopes: ['send', 'read_events', 'contacts:read', 'contacts:write'], ipAllowlist: ['127.0.0.1'], dailyLimit: 500 }, 201)).key;
    const smsKey = (await admin('POST', '/api/api-keys', { name: 'sms', scopes: ['sms:send'], expiresAt: new Date(Date.now() + 86_400_000).toISOString() }, 201)).key;
    const doomed = await admin('POST', '/api/api-keys', { name: 'doomed', scopes: ['send'] }, 201);
    await admin('DELETE', `/api/api-keys/${doomed.id}`, undefined, 200);
    // a key used since it was made shows lastUsedAt
    await call('GET', '/api/messages', { apiKey: key });
    await admin('GET', '/api/api-keys', undefined, 200);

    // templates
    const template = await admin('POST', '/api/templates', { name: 'Receipt', subject: 'Receipt {{orderId}}', html: '<p>Thanks {{firstName}}</p>', text: 'Thanks {{firstName}}' }, 201);
    await admin('PUT', `/api/templates/${template.id}`, { subject: 'Your receipt {{orderId}}' }, 200);
    await admin('GET', `/api/templates/${template.id}`, undefined, 200);
    await admin('GET', '/api/templates', undefined, 200);
    await admin('POST', `/api/templates/${template.id}/test`, { to: 'tester@example.org', fromEmail: from, variables: { firstName: 'Tess' } }, 201);
    const gone = await admin('POST', '/api/templates', { name: 'Old', subject: 'Old', html: '<p>old</p>', text: 'old' }, 201);
    await admin('DELETE', `/api/templates/${gone.id}`, undefined, 200);

    // contacts
    await call('POST', '/api/contacts', { apiKey: key, body: { email: 'ada@example.org', firstName: 'Ada', tags: ['vip'], listIds: ['news'] } });
    const updated = await call('POST', '/api/contacts', { apiKey: key, body: { email: 'ada@example.org', company: 'Engines' } });
    expect(updated.status).to.equal(200);
    await admin('POST', '/api/contacts', { email: 'alan@example.org', listIds: ['news'] }, 201);
    const imported = await call('POST', '/api/contacts/import', { apiKey: key, body: { contacts: [{ email: 'grace@example.org', lastName: 'Hopper' }, { email: 'not an address' }], listId: 'news' } });
    expect(imported.body.errors).to.have.length(1);
    await call('POST', '/api/contacts/import', { apiKey: key, body: { contacts: [{ email: 'grace@example.org' }] } });
    await call('GET', '/api/contacts?limit=2&listId=news', { apiKey: key });
    await call('GET', `/api/contacts/${encodeURIComponent('ada@example.org')}`, { apiKey: key });

    // sends: transactional (with an attachment), scheduled, batch, SMS
    const sent = await call('POST', '/api/send/transactional', {
      apiKey: key,
      headers: { 'idempotency-key': 'order-1042-receipt' },
      body: {
        to: 'ada@example.org',
        fromEmail: from,
        fromName: 'Contract',
        subject: 'Your receipt',
        html: '<p>Thanks!</p><p><a href="https://example.com/orders/1042">Your order</a></p>',
        text: 'Thanks!',
        tags: ['receipt'],
        metadata: { orderId: '1042' },
        unsubscribeUrl: 'https://example.com/prefs',
        attachments: [{ filename: 'receipt.txt', content: Buffer.from('total: 10').toString('base64') }],
      },
    });
    expect(sent.status).to.equal(201);
    const messageId: string = sent.body.messageLogId;
    const sendAt = new Date(Date.now() + 3_600_000).toISOString();
    const scheduled = await call('POST', '/api/send/transactional', { apiKey: key, body: { to: 'alan@example.org', fromEmail: from, subject: 'Later', html: '<p>later</p>', text: 'later', sendAt } });
    expect(scheduled.body.status).to.equal('scheduled');
    const batch = await call('POST', '/api/send/batch', {
      apiKey: key,
      body: {
        messages: [
          { to: 'grace@example.org', fromEmail: from, subject: 'Batch', html: '<p>b</p>', text: 'b' },
          { to: 'grace@example.org', fromEmail: from, subject: 'Batch later', html: '<p>b</p>', text: 'b', sendAt },
          { to: 'not an address', fromEmail: from, subject: 'Batch', html: '<p>b</p>' },
          { to: 'grace@example.org', fromEmail: 'someone@unverified.example', subject: 'Batch', html: '<p>b</p>', text: 'b' },
        ],
      },
    });
    expect(batch.body.items.map((i: { status: number }) => i.status)).to.deep.equal([201, 201, 400, 400]);
    expect(batch.body.items[2].issues).to.be.an('array');
    const sms = await call('POST', '/api/send/sms', { apiKey: smsKey, body: { to: '+14155552671', body: 'Your code is 1234' } });
    expect(sms.status).to.equal(201);
    await admin('POST', `/api/messages/${scheduled.body.messageLogId}/cancel`, undefined, 200);

    // what the sandbox recorded; its open pixel and unsubscribe link
    const outbox = await eventually(
      () => admin('GET', '/api/sandbox/emails'),
      (b) => b.items.some((e: { messageId: string }) => e.messageId === messageId),
    );
    const email = outbox.items.find((e: { messageId: string }) => e.messageId === messageId);
    await fetched('GET', `/api/sandbox/emails/${messageId}/attachments/0`, { headers: { authorization: `Bearer ${app.adminToken}` } });
    await eventually(() => admin('GET', '/api/sandbox/sms'), (b) => b.items.length > 0);
    const pixel = new URL((email.html as string).match(/<img src="([^"]*\/o\/[^"]*)"/)![1].replace(/&amp;/g, '&'));
    const browser = { 'user-agent': 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15' };
    await fetched('HEAD', pixel.pathname + pixel.search, { headers: browser });
    await fetched('GET', pixel.pathname + pixel.search, { headers: browser });
    const unsubscribe = new URL((email.headers as { name: string; value: string }[]).find((h) => h.name === 'List-Unsubscribe')!.value.slice(1, -1));
    expect((await fetched('GET', unsubscribe.pathname, { headers: { accept: 'text/html' } })).status).to.equal(200);

    // messages: list, detail for the dashboard and for the key, history, aggregate, series, changes
    const smsId: string = sms.body.messageLogId;
    await eventually(
      () => admin('GET', `/api/messages/${messageId}`),
      (m) => m.status !== 'queued' && m.opens > 0,
    );
    await eventually(() => admin('GET', `/api/messages/${smsId}`), (m) => m.status !== 'queued');
    await call('GET', `/api/messages/${messageId}`, { apiKey: key });
    await admin('GET', `/api/messages/${messageId}/history`, undefined, 200);
    await admin('GET', '/api/messages?limit=2', undefined, 200);
    await call('GET', '/api/messages?tag=receipt&metadata%5BorderId%5D=1042', { apiKey: key });
    await admin('GET', '/api/messages/aggregate', undefined, 200);
    await admin('GET', '/api/messages/timeseries?interval=hour', undefined, 200);
    await admin('GET', '/api/messages/changes?wait=0&limit=5', undefined, 200);

    // a provider's reports of the message: Postmark's and SES's (signed by SNS)
    const reported = await call('POST', '/api/provider-events/postmark', {
      headers: { authorization: `Basic ${Buffer.from(`${POSTMARK.user}:${POSTMARK.password}`).toString('base64')}` },
      body: postmark.delivery({ msgId: messageId, postmarkMessageId: crypto.randomUUID(), recipient: 'ada@example.org' }),
    });
    expect(reported.status).to.equal(200);
    const ses = await call('POST', '/api/provider-events/ses', {
      headers: { 'x-amz-sns-message-type': 'Notification' },
      body: JSON.stringify(signedSnsNotification(sesEvent('Delivery', { msgId: messageId, sesMessageId: crypto.randomUUID(), recipients: ['ada@example.org'] }), { certUrl: sns.certUrl })),
    });
    expect(ses.status).to.equal(200);

    // the one-click unsubscribe (RFC 8058) and suppressions
    expect((await fetched('POST', unsubscribe.pathname, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' })).status).to.equal(200);
    await admin('POST', '/api/suppressions', { email: 'bob@example.org', reason: 'asked by phone' }, 201);
    await admin('POST', '/api/suppressions', { email: 'bob@example.org' }, 200);
    await admin('POST', '/api/suppressions', { phone: '+14155550123' }, 201);
    await admin('POST', '/api/suppressions/import', { entries: [{ email: 'carol@example.org', reason: 'bounced', detail: 'from the old provider' }, { phone: 'nope' }], notify: false }, 200);
    await admin('GET', '/api/suppressions?limit=2', undefined, 200);
    await fetched('POST', '/api/suppressions/export', { headers: { authorization: `Bearer ${app.adminToken}` } });
    await admin('DELETE', `/api/suppressions/${encodeURIComponent('bob@example.org')}`, undefined, 200);
    await admin('DELETE', `/api/suppressions/${encodeURIComponent('+14155550123')}`, undefined, 200);
    await admin('POST', '/api/sandbox/sms/opt-outs', { phone: '+14155550199' }, 201);
    await admin('POST', '/api/sms/sync-optouts', undefined, 200);

    // webhooks: a test that fails and is retried, one that is delivered
    const hook = await admin('POST', '/api/webhooks', { url: receiver.hook, events: ['contact.suppressed', 'contact.unsubscribed'] }, 201);
    await admin('PATCH', `/api/webhooks/${hook.id}`, { events: ['contact.suppressed'] }, 200);
    await admin('POST', `/api/webhooks/${hook.id}/rotate-secret`, { activeAt: new Date(Date.now() + 86_400_000).toISOString() }, 200);
    await admin('POST', `/api/webhooks/${hook.id}/reveal-secret`, undefined, 200);
    await admin('GET', '/api/webhooks', undefined, 200);
    receiver.script([503]);
    const failed = await admin('POST', `/api/webhooks/${hook.id}/test`, undefined, 200);
    expect(failed).to.deep.include({ delivered: false, responseStatus: 503 });
    receiver.script([200]);
    await admin('POST', `/api/webhooks/${hook.id}/test`, undefined, 200);
    const deliveries = await admin('GET', `/api/webhooks/${hook.id}/deliveries?status=failed`, undefined, 200);
    await admin('POST', `/api/webhook-deliveries/${deliveries.items[0].id}/retry`, undefined, 200);
    await admin('GET', `/api/webhooks/${hook.id}/deliveries`, undefined, 200);
    await admin('DELETE', `/api/webhooks/${hook.id}`, undefined, 200);

    // campaigns: a draft changed and deleted, one scheduled, paused, resumed and cancelled
    const audience = { listId: 'news' };
    const draft = await admin('POST', '/api/campaigns', { name: 'Draft', templateId: template.id, fromEmail: from, audience }, 201);
    await admin('PATCH', `/api/campaigns/${draft.id}`, { fromName: 'Contract', variables: { orderId: 'n/a' } }, 200);
    await admin('DELETE', `/api/campaigns/${draft.id}`, undefined, 204);
    const campaign = await admin('POST', '/api/campaigns', { name: 'Spring', templateId: template.id, fromEmail: from, fromName: 'Contract', audience, variables: { orderId: '-' } }, 201);
    await admin('POST', `/api/campaigns/${campaign.id}/send`, { scheduledAt: new Date(Date.now() + 86_400_000).toISOString() }, 202);
    await admin('POST', `/api/campaigns/${campaign.id}/pause`, undefined, 200);
    await admin('POST', `/api/campaigns/${campaign.id}/resume`, undefined, 200);
    await admin('POST', `/api/campaigns/${campaign.id}/cancel`, undefined, 200);
    await admin('GET', `/api/campaigns/${campaign.id}`, undefined, 200);
    await admin('GET', '/api/campaigns', undefined, 200);

    // a person's data, then their erasure; the audit trail of it all
    await admin('POST', `/api/contacts/${encodeURIComponent('ada@example.org')}/export`, undefined, 200);
    await call('DELETE', `/api/contacts/${encodeURIComponent('grace@example.org')}?erase=true`, { apiKey: key });
    await admin('GET', '/api/audit?limit=5', undefined, 200);
    await admin('DELETE', '/api/auth/session', undefined, 204);
  });

  it('has checked an answer of every operation the document gives a JSON schema', () => {
    const missing: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const method of METHODS.filter((m) => operations[m])) {
        for (const [status, response] of Object.entries(operations[method].responses)) {
          const operation = `${method.toUpperCase()} ${path} ${status}`;
          if (/^2\d\d$/.test(status) && response.content && !checked.has(operation)) missing.push(operation);
        }
      }
    }
    expect(missing).to.deep.equal([]);
  });

  it('refuses an answer with a field its schema does not name, or without one it requires', () => {
    const operation = 'GET /api/api-keys 200';
    const listed = answered.get(operation) as { items: Record<string, unknown>[] };
    const schema = doc.paths['/api/api-keys'].get.responses['200'].content!['application/json'].schema!;
    const validate = validatorFor(operation, schema);
    expect(validate(listed)).to.equal(true);
    const [first, ...rest] = listed.items;
    const { lastUsedAt: _dropped, ...withoutRequired } = first;
    expect(validate({ items: [{ ...first, secret: 'leaked' }, ...rest] })).to.equal(false);
    expect(validate({ items: [withoutRequired, ...rest] })).to.equal(false);
    expect(validate({ ...listed, total: listed.items.length })).to.equal(false);
    expect(validate({ items: [{ ...first, createdAt: 'yesterday' }, ...rest] })).to.equal(false);
  });
});
