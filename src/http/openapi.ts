import { z } from 'zod';
import type { AnyRoute } from './route.js';
import { IDEMPOTENCY_HEADER, MAX_IDEMPOTENCY_KEY_LENGTH, REPLAYED_HEADER } from './idempotency.js';
import { IN_PROGRESS_MESSAGE, MISMATCH_MESSAGE } from '../domain/idempotency/record.js';
import { MAX_LISTED_ISSUES, throttled } from '../domain/errors.js';
import { KEY_FAILURES_MESSAGE } from '../commands/key-failure-throttle.js';
import { AUTH_REFUSALS, type RouteAuth } from './principal.js';
import { CSRF_COOKIE, CSRF_HEADER, CSRF_REFUSAL, SAFE_METHODS, SESSION_COOKIE } from './session.js';
import { BODY_TOO_LARGE, MALFORMED_JSON, errorBody, mapError } from './error-mapping.js';

type Json = Record<string, unknown>;

const ref = (kind: 'schemas' | 'headers', name: string) => ({ $ref: `#/components/${kind}/${name}` });

const idempotencyKeyParameter = {
  name: IDEMPOTENCY_HEADER,
  in: 'header',
  required: false,
  description:
    `Makes the request safe to retry: the same key with the same body from the same caller within 24 h answers the first response again (with \`${REPLAYED_HEADER}: true\`) and sends nothing; ` +
    'a request refused with a 4xx or failed with a 5xx is not remembered. Name what the message is for, e.g. `order-1234-confirmation`.',
  // no example value: the reference's "Try it out" would send the same key with every body tried
  schema: { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH },
};
const idempotencyConflict = {
  description: `The Idempotency-Key is taken: "${MISMATCH_MESSAGE}", or "${IN_PROGRESS_MESSAGE}"`,
  examples: { mismatch: errorBody(409, MISMATCH_MESSAGE), inProgress: errorBody(409, IN_PROGRESS_MESSAGE) },
};
const replayedHeader = {
  [REPLAYED_HEADER]: { description: 'Present, `true`, when this is the stored answer to an earlier request with the same Idempotency-Key', schema: { type: 'string', enum: ['true'] } },
};

/** Statuses whose answer may say when to ask again (src/domain/errors.ts `throttled`, src/http/error-mapping.ts). */
const RETRY_STATUSES = new Set([409, 429, 503]);

/** A Date is answered as JSON.stringify writes it, an ISO 8601 instant; zod has no JSON Schema of its own for one. */
function dateAsInstant(ctx: { zodSchema: z.core.$ZodTypes; jsonSchema: z.core.JSONSchema.BaseSchema }) {
  if (ctx.zodSchema._zod.def.type === 'date') Object.assign(ctx.jsonSchema, { type: 'string', format: 'date-time' });
}

const SUBSCHEMA = ['items', 'additionalProperties', 'not'] as const;
const SUBSCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf'] as const;

/**
 * A JSON Schema as OAS 3.0 takes it: a Schema Object has one `example`, not the `examples` list zod
 * writes from a schema's metadata (code generators and validators ignore or refuse the list), so the
 * first is kept. Only schema keywords are walked: an example's own data is left as given.
 */
function withOas30Examples(schema: unknown): unknown {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const s: Json = { ...(schema as Json) };
  if (Array.isArray(s.examples)) {
    if (s.example === undefined && s.examples.length > 0) s.example = s.examples[0];
    delete s.examples;
  }
  if (s.properties && typeof s.properties === 'object') {
    s.properties = Object.fromEntries(Object.entries(s.properties as Json).map(([k, v]) => [k, withOas30Examples(v)]));
  }
  for (const k of SUBSCHEMA) if (s[k] !== undefined) s[k] = Array.isArray(s[k]) ? (s[k] as unknown[]).map(withOas30Examples) : withOas30Examples(s[k]);
  for (const k of SUBSCHEMA_LISTS) if (Array.isArray(s[k])) s[k] = (s[k] as unknown[]).map(withOas30Examples);
  return s;
}

function jsonSchema(schema: z.ZodType): Json {
  return withOas30Examples(z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input', unrepresentable: 'any', override: dateAsInstant })) as Json;
}

/**
 * A body's schema, with its first example as the media type's: what the reference's "Try it out"
 * starts from (generated from the schema alone, a send's was a random template id and a past sendAt).
 */
function mediaOf(schema: z.ZodType) {
  const js = jsonSchema(schema);
  // zod leaves an input schema's examples out when a field transforms: read from its metadata then
  const example = js.example ?? (z.globalRegistry.get(schema)?.examples as unknown[] | undefined)?.[0];
  return { schema: js, ...(example !== undefined ? { example } : {}) };
}

/**
 * A query property named `<name>[key]` stands for the family `<name>[<any key>]=<value>`: a client
 * sends one parameter per key, which OAS calls a deepObject (an object `<name>` of such values), where
 * a literal `metadata[key]` parameter would let a generated client send only that one key.
 */
const FAMILY = /^(\w+)\[key\]$/;

function parameters(schema: z.ZodType | undefined, where: 'query' | 'path') {
  if (!schema) return [];
  const js = jsonSchema(schema) as { properties?: Record<string, Json>; required?: string[] };
  return Object.entries(js.properties ?? {}).map(([name, s]) => {
    const family = where === 'query' ? FAMILY.exec(name)?.[1] : undefined;
    if (family) {
      const { description, ...value } = s;
      return { name: family, in: where, required: false, style: 'deepObject', explode: true, ...(description ? { description } : {}), schema: { type: 'object', additionalProperties: value } };
    }
    return { name, in: where, required: where === 'path' || (js.required ?? []).includes(name), schema: s };
  });
}

/**
 * Who may call a route. A dashboard session is a bearer JWT, or the same token in the session cookie;
 * a state-changing request made with the cookie also echoes the CSRF cookie in a header (src/http/session.ts).
 */
function securityOf(r: AnyRoute): unknown[] {
  const session = [{ bearer: [] }, SAFE_METHODS.has(r.method.toUpperCase()) ? { sessionCookie: [] } : { sessionCookie: [], csrfToken: [] }];
  switch (r.auth.kind) {
    case 'apiKey':
      return [{ apiKey: [] }];
    case 'jwt':
      return session;
    case 'apiKeyOrJwt':
      return [{ apiKey: [] }, ...session];
    case 'public':
      if (r.ownCredentials === 'postmarkBasic') return [{ postmarkBasic: [] }];
      // `{}`: without METRICS_TOKEN the endpoint is open
      if (r.ownCredentials === 'metricsToken') return [{ metricsToken: [] }, {}];
      return [];
  }
}

/** A status the service answers though a route need not list it: why, in the service's own words. */
interface Answered {
  description: string;
  examples: Record<string, unknown>;
}

/** What the route's authentication answers when it refuses (src/http/auth.ts), by status. */
function authAnswers(auth: RouteAuth, method: string): Record<number, Answered> {
  if (auth.kind === 'public') return {};
  const csrf = !SAFE_METHODS.has(method.toUpperCase());
  const session401 = {
    noSession: errorBody(401, AUTH_REFUSALS.noSession),
    passwordChanged: errorBody(401, AUTH_REFUSALS.passwordChanged),
    signedOut: errorBody(401, AUTH_REFUSALS.signedOut),
  };
  const csrf403 = csrf ? { csrf: errorBody(403, CSRF_REFUSAL) } : {};
  const csrfWords = csrf ? `, or the session cookie came without its ${CSRF_HEADER} header` : '';
  if (auth.kind === 'jwt') {
    return {
      401: { description: 'No dashboard session: the bearer token or session cookie is missing, invalid or expired, or its session ended (a password change, a sign-out)', examples: session401 },
      403: { description: `An API key was presented: this endpoint takes a dashboard session only${csrfWords}`, examples: { apiKey: errorBody(403, AUTH_REFUSALS.keyOnDashboardRoute), ...csrf403 } },
    };
  }
  const key401 = {
    invalidKey: errorBody(401, AUTH_REFUSALS.invalidKey),
    expiredKey: errorBody(401, AUTH_REFUSALS.expiredKey),
    keyAddressDenied: errorBody(401, AUTH_REFUSALS.keyAddressDenied),
  };
  const keyWords = 'The API key is missing, unknown or revoked, expired, or not allowed from this client address';
  const throttledKeys = {
    description: 'Too many refused API keys from this client address: every keyed request from it is refused until Retry-After has passed',
    examples: { tooManyFailedKeys: errorBody(429, throttled(KEY_FAILURES_MESSAGE, 15 * 60_000).message) },
  };
  if (auth.kind === 'apiKey') {
    return {
      401: { description: keyWords, examples: key401 },
      403: { description: `The API key lacks the \`${auth.scope}\` scope`, examples: { missingScope: errorBody(403, AUTH_REFUSALS.missingScope(auth.scope)) } },
      429: throttledKeys,
    };
  }
  return {
    401: { description: `${keyWords}; or, with no X-API-Key, the dashboard session is missing, invalid, expired or ended`, examples: { ...key401, ...session401 } },
    403: { description: `The API key lacks the \`${auth.scope}\` scope${csrfWords}`, examples: { missingScope: errorBody(403, AUTH_REFUSALS.missingScope(auth.scope)), ...csrf403 } },
    429: throttledKeys,
  };
}

/** What the route answers to an empty body: a true example of a validation error, `issues` and all. */
function emptyBodyRefusal(schema: z.ZodType): unknown {
  try {
    const parsed = schema.safeParse({});
    return parsed.success ? undefined : mapError(parsed.error).body;
  } catch {
    return undefined;
  }
}

/** What reading and validating the request answers (src/http/app.ts, src/http/error-mapping.ts), by status. */
function requestAnswers(r: AnyRoute): Record<number, Answered> {
  const answers: Record<number, Answered> = {};
  const jsonBody = r.body !== undefined && r.bodyType !== 'text';
  if (r.body || r.query || r.params) {
    const empty = r.body ? emptyBodyRefusal(r.body) : undefined;
    answers[400] = {
      description: `The request is not valid${jsonBody ? ' (or its body is not JSON)' : ''}: \`message\` names the first problem, \`issues\` lists each one (at most ${MAX_LISTED_ISSUES})`,
      examples: { ...(empty ? { emptyBody: empty } : {}), ...(jsonBody ? { malformedJson: errorBody(400, MALFORMED_JSON) } : {}) },
    };
  }
  if (r.body || r.bodyType === 'text') answers[413] = { description: 'The request body is over 10 MB', examples: { tooLarge: errorBody(413, BODY_TOO_LARGE) } };
  return answers;
}

/**
 * The name a generated client gives the operation: the method, then each segment of the path after
 * `/api` in PascalCase, a parameter as `By<Name>` (`POST /api/webhooks/:id/rotate-secret` →
 * `postWebhooksByIdRotateSecret`). Method and path are unique, so the names are; a route may name
 * itself instead (`operationId`).
 */
export function operationIdOf(r: Pick<AnyRoute, 'method' | 'path' | 'operationId'>): string {
  if (r.operationId) return r.operationId;
  const pascal = (word: string) => word.replace(/(?:^|[-_.])(\w)/g, (_, c: string) => c.toUpperCase());
  const words = r.path
    .replace(/^\/api(?=\/|$)/, '')
    .split('/')
    .filter(Boolean)
    .map((segment) => (segment.startsWith(':') ? `By${pascal(segment.slice(1))}` : pascal(segment)));
  return r.method + words.join('');
}

/** The OpenAPI 3.0 document, generated from the same zod schemas the routes validate with. */
export function buildOpenApi(routes: AnyRoute[], info: { title: string; version: string; baseUrl: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  const named = new Map<string, string>();
  for (const r of routes) {
    const path = r.path.replace(/:(\w+)/g, '{$1}');
    const operationId = operationIdOf(r);
    if (named.has(operationId)) throw new Error(`operationId ${operationId} names both ${named.get(operationId)} and ${r.method} ${r.path}`);
    named.set(operationId, `${r.method} ${r.path}`);
    const answered: Record<number, Answered> = { ...requestAnswers(r), ...authAnswers(r.auth, r.method) };
    if (r.idempotent) answered[409] = idempotencyConflict;
    const statuses = [...new Set([...Object.keys(r.responses), ...Object.keys(answered)].map(Number))].sort((a, b) => a - b);
    paths[path] ??= {};
    paths[path][r.method] = {
      operationId,
      summary: r.summary,
      tags: [r.tag],
      security: securityOf(r),
      ...('scope' in r.auth ? { 'x-required-scope': r.auth.scope } : {}),
      parameters: [...parameters(r.params, 'path'), ...parameters(r.query, 'query'), ...(r.idempotent ? [idempotencyKeyParameter] : [])],
      ...(r.body ? { requestBody: { required: true, content: { 'application/json': mediaOf(r.body) } } } : {}),
      responses: Object.fromEntries(
        statuses.map((status) => {
          const own = r.responses[status];
          const also = answered[status];
          // the idempotency conflict is the one a client of such a route must handle: its words lead
          const description = (status === 409 && r.idempotent ? also?.description : undefined) ?? own?.description ?? also!.description;
          const examples = Object.fromEntries(Object.entries(also?.examples ?? {}).map(([name, value]) => [name, { value }]));
          const content = own?.schema
            ? { [own.contentType ?? 'application/json']: { schema: jsonSchema(own.schema) } }
            : status >= 400
              ? { 'application/json': { schema: ref('schemas', 'Error'), ...(Object.keys(examples).length ? { examples } : {}) } }
              : undefined;
          const headers = {
            'X-Request-Id': ref('headers', 'RequestId'),
            ...(r.idempotent && status < 300 ? replayedHeader : {}),
            // a body of the route's own (a health check's) is not the service's error, and says nothing of a retry
            ...(RETRY_STATUSES.has(status) && !own?.schema ? { 'Retry-After': ref('headers', 'RetryAfter') } : {}),
          };
          return [status, { description, headers, ...(content ? { content } : {}) }];
        }),
      ),
    };
  }
  return {
    openapi: '3.0.3',
    info: { title: info.title, version: info.version },
    servers: [{ url: info.baseUrl }],
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A dashboard session token, from POST /api/auth/login' },
        sessionCookie: {
          type: 'apiKey',
          in: 'cookie',
          name: SESSION_COOKIE,
          description: `The dashboard's session: the same token, set HttpOnly by POST /api/auth/session. A request other than GET, HEAD or OPTIONS made with it also needs csrfToken.`,
        },
        csrfToken: {
          type: 'apiKey',
          in: 'header',
          name: 'X-CSRF-Token',
          description: `The value of the \`${CSRF_COOKIE}\` cookie set beside the session: required with the session cookie on a state-changing request`,
        },
        postmarkBasic: { type: 'http', scheme: 'basic', description: 'The user and password configured for Postmark webhooks (POSTMARK_WEBHOOK_USER, POSTMARK_WEBHOOK_PASSWORD)' },
        metricsToken: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN; required only when it is set' },
      },
      headers: {
        RequestId: {
          description: "The request's id, as its log lines name it: the request's own X-Request-Id when that is 1 to 128 of A-Z a-z 0-9 _ . -, else a new UUID",
          schema: { type: 'string' },
        },
        RetryAfter: {
          description:
            'Whole seconds after which the same request may succeed, sent when the service knows: too many failed attempts (API keys, sign-in, password), the database reconnecting (503), a campaign step under way (503), a record changed by other requests at the same moment (409)',
          schema: { type: 'integer', minimum: 1 },
        },
      },
      schemas: {
        Error: {
          type: 'object',
          required: ['message', 'error', 'statusCode'],
          properties: {
            message: { type: 'string', description: 'What went wrong; for a 400, its first problem' },
            error: { type: 'string', description: "The status's name, e.g. `Bad Request`" },
            statusCode: { type: 'integer' },
            issues: {
              type: 'array',
              description: `A request that failed validation: each problem (at most ${MAX_LISTED_ISSUES})`,
              items: {
                type: 'object',
                required: ['field', 'message'],
                properties: {
                  field: { type: 'string', nullable: true, description: 'The field as a dotted path (`messages.0.to`); null for the value as a whole' },
                  message: { type: 'string' },
                },
              },
            },
          },
        },
      },
    },
    paths,
  };
}
