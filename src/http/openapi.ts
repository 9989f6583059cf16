import { z } from 'zod';
import type { AnyRoute } from './route.js';
import { IDEMPOTENCY_HEADER, MAX_IDEMPOTENCY_KEY_LENGTH, REPLAYED_HEADER } from './idempotency.js';
import { IN_PROGRESS_MESSAGE, MISMATCH_MESSAGE } from '../domain/idempotency/record.js';

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
  content: {
    'application/json': {
      schema: { $ref: '#/components/schemas/Error' },
      examples: {
        mismatch: { value: { message: MISMATCH_MESSAGE, error: 'Conflict', statusCode: 409 } },
        inProgress: { value: { message: IN_PROGRESS_MESSAGE, error: 'Conflict', statusCode: 409 } },
      },
    },
  },
};
const replayedHeader = {
  [REPLAYED_HEADER]: { description: 'Present, `true`, when this is the stored answer to an earlier request with the same Idempotency-Key', schema: { type: 'string', enum: ['true'] } },
};

function jsonSchema(schema: z.ZodType): unknown {
  return z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input', unrepresentable: 'any' });
}

/**
 * A body's schema, with its first example as the media type's: what the reference's "Try it out"
 * starts from (generated from the schema alone, a send's was a random template id and a past sendAt).
 */
function mediaOf(schema: z.ZodType) {
  const js = jsonSchema(schema) as { example?: unknown; examples?: unknown[] };
  // zod leaves an input schema's examples out when a field transforms: read from its metadata then
  const example = js.example ?? (js.examples ?? (z.globalRegistry.get(schema)?.examples as unknown[] | undefined))?.[0];
  return { schema: js, ...(example !== undefined ? { example } : {}) };
}

function parameters(schema: z.ZodType | undefined, where: 'query' | 'path') {
  if (!schema) return [];
  const js = jsonSchema(schema) as { properties?: Record<string, unknown>; required?: string[] };
  return Object.entries(js.properties ?? {}).map(([name, s]) => ({
    name,
    in: where,
    required: where === 'path' || (js.required ?? []).includes(name),
    schema: s,
  }));
}

const security: Record<string, unknown> = {
  apiKey: [{ apiKey: [] }],
  jwt: [{ bearer: [] }],
  apiKeyOrJwt: [{ apiKey: [] }, { bearer: [] }],
  public: [],
};

/** The OpenAPI 3.0 document, generated from the same zod schemas the routes validate with. */
export function buildOpenApi(routes: AnyRoute[], info: { title: string; version: string; baseUrl: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = r.path.replace(/:(\w+)/g, '{$1}');
    paths[path] ??= {};
    paths[path][r.method] = {
      summary: r.summary,
      tags: [r.tag],
      security: security[r.auth.kind],
      ...('scope' in r.auth ? { 'x-required-scope': r.auth.scope } : {}),
      parameters: [...parameters(r.params, 'path'), ...parameters(r.query, 'query'), ...(r.idempotent ? [idempotencyKeyParameter] : [])],
      ...(r.body ? { requestBody: { required: true, content: { 'application/json': mediaOf(r.body) } } } : {}),
      responses: {
        ...Object.fromEntries(
          Object.entries(r.responses).map(([status, res]) => [
            status,
            {
              description: res.description,
              ...(res.schema ? { content: { [res.contentType ?? 'application/json']: { schema: jsonSchema(res.schema) } } } : {}),
              ...(r.idempotent && Number(status) < 300 ? { headers: replayedHeader } : {}),
            },
          ]),
        ),
        ...(r.idempotent ? { 409: idempotencyConflict } : {}),
      },
    };
  }
  return {
    openapi: '3.0.3',
    info: { title: info.title, version: info.version },
    servers: [{ url: info.baseUrl }],
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      },
      schemas: {
        Error: {
          type: 'object',
          required: ['message', 'error', 'statusCode'],
          properties: { message: { type: 'string' }, error: { type: 'string' }, statusCode: { type: 'integer' } },
        },
      },
    },
    paths,
  };
}
