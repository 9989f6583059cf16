import fc from 'fast-check';
import { contentType, garbageCredentials, oddBodyText, oddCursor, oddHeaders, oddPathSegment } from './hostile.js';
import { RawJson, tagsOf, toJsonText } from './json-text.js';
import { anyValue, PoolPick, validish, type JsonSchema } from './schema-arbitrary.js';

export interface Operation {
  method: string;
  /** OpenAPI path, `{name}` placeholders */
  path: string;
  security: Array<Record<string, unknown>>;
  parameters: Array<{ name: string; in: 'path' | 'query'; required: boolean; schema: JsonSchema }>;
  bodySchema?: JsonSchema;
}

/** The operations of an OpenAPI document, as the fuzzer walks them. */
export function operationsOf(doc: { paths: Record<string, Record<string, any>> }): Operation[] {
  return Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      security: op.security ?? [],
      // a deepObject (`metadata`) is sent as its members are, `metadata[<key>]=<value>`: one such member stands for them
      parameters: (op.parameters ?? []).map((p: any) => (p.style === 'deepObject' ? { ...p, name: `${p.name}[key]`, schema: p.schema.additionalProperties } : p)),
      bodySchema: op.requestBody?.content?.['application/json']?.schema,
    })),
  );
}

export type Credentials =
  | { kind: 'none' | 'jwt' | 'apiKey' | 'both' | 'postmark' }
  | { kind: 'garbage'; headers: Record<string, string> };

/** One generated request, before the run's ids and credentials are filled in. */
export interface RequestPlan {
  credentials: Credentials;
  pathParams: Record<string, unknown>;
  query: Array<[string, unknown, 'encode' | 'raw']>;
  headers: Record<string, string>;
  body?: { value: unknown } | { text: string };
  contentType?: string;
}

const bodyless = (method: string) => method === 'GET' || method === 'HEAD';

/** Requests for one operation: valid-ish values from its schemas mixed with hostile ones. */
export function requestPlans(op: Operation): fc.Arbitrary<RequestPlan> {
  const credentials: fc.Arbitrary<Credentials> = fc.oneof(
    { arbitrary: fc.constantFrom<Credentials>({ kind: 'jwt' }, { kind: 'apiKey' }), weight: 6 },
    { arbitrary: fc.constantFrom<Credentials>({ kind: 'none' }, { kind: 'both' }, { kind: 'postmark' }), weight: 2 },
    { arbitrary: garbageCredentials.map((headers): Credentials => ({ kind: 'garbage', headers: headers as Record<string, string> })), weight: 2 },
  );
  const pathParams: Record<string, fc.Arbitrary<unknown>> = {};
  for (const p of op.parameters.filter((x) => x.in === 'path')) {
    pathParams[p.name] = fc.oneof(
      { arbitrary: fc.nat().map((i) => new PoolPick(i)), weight: 3 },
      { arbitrary: validish(p.schema), weight: 2 },
      { arbitrary: oddPathSegment.map((raw) => new RawJson(raw, 'raw-path')), weight: 2 },
    );
  }
  const declared = op.parameters.filter((x) => x.in === 'query');
  const queryEntry = (name: string, schema?: JsonSchema) =>
    fc.oneof(
      { arbitrary: anyValue(schema).map((v) => [name, v, 'encode'] as [string, unknown, 'encode']), weight: 4 },
      { arbitrary: oddPathSegment.map((v) => [name, v, 'raw'] as [string, unknown, 'raw']), weight: 1 },
      // a cursor is opaque to the schema: what one decodes to is the hostile part
      ...(name === 'cursor' || name === 'after' ? [{ arbitrary: oddCursor.map((v) => [name, v, 'encode'] as [string, unknown, 'encode']), weight: 4 }] : []),
    );
  const query = fc
    .tuple(
      fc.tuple(...declared.map((p) => fc.option(queryEntry(p.name, p.schema), { freq: 2 }))),
      // unknown names, prototype names, and a declared name repeated (which the parser makes an array)
      fc.array(queryEntry('x').chain(([, v, how]) => fc.constantFrom('x', '__proto__', 'constructor', '', ...declared.map((p) => p.name)).map((n) => [n, v, how] as [string, unknown, 'encode' | 'raw'])), { maxLength: 3 }),
    )
    .map(([known, extra]) => [...known.filter((e): e is [string, unknown, 'encode' | 'raw'] => e !== null), ...extra]);
  const body: fc.Arbitrary<RequestPlan['body']> = bodyless(op.method)
    ? fc.constant(undefined)
    : op.bodySchema
      ? fc.oneof(
          { arbitrary: anyValue(op.bodySchema).map((value) => ({ value })), weight: 8 },
          { arbitrary: oddBodyText.map((text) => ({ text })), weight: 2 },
          { arbitrary: fc.constant(undefined), weight: 1 },
        )
      : fc.oneof(
          { arbitrary: fc.constant(undefined), weight: 3 },
          { arbitrary: oddBodyText.map((text) => ({ text })), weight: 1 },
          { arbitrary: anyValue(undefined).map((value) => ({ value })), weight: 1 },
        );
  return fc.record({
    credentials,
    pathParams: fc.record(pathParams),
    query,
    headers: fc.oneof({ arbitrary: fc.constant({}), weight: 3 }, { arbitrary: oddHeaders as fc.Arbitrary<Record<string, string>>, weight: 1 }),
    body,
    contentType: fc.oneof({ arbitrary: fc.constant(undefined), weight: 5 }, { arbitrary: contentType, weight: 1 }),
  });
}

export interface RunContext {
  ids: string[];
  jwt: string;
  apiKey: string;
  postmarkBasic: string;
}

export interface ConcreteRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** hostile classes the request carries, to tell known failures apart */
  tags: Set<string>;
}

function pick(ctx: RunContext, p: PoolPick): string {
  return ctx.ids.length ? ctx.ids[p.index % ctx.ids.length] : 'nonexistent';
}

function resolvePicks(value: unknown, ctx: RunContext): unknown {
  if (value instanceof PoolPick) return pick(ctx, value);
  if (value instanceof RawJson) return value;
  if (Array.isArray(value)) return value.map((v) => resolvePicks(v, ctx));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = Object.create(null);
    for (const [k, v] of Object.entries(value)) out[k] = resolvePicks(v, ctx);
    return out;
  }
  return value;
}

/** encodeURIComponent, except that a lone surrogate (which it refuses) goes as its CESU-8 bytes, undecodable. */
function encode(v: unknown): string {
  const s = typeof v === 'string' ? v : v instanceof RawJson ? v.text : toJsonText(v);
  const hex = (n: number) => n.toString(16).toUpperCase();
  let out = '';
  for (const ch of s) {
    const unit = ch.charCodeAt(0);
    out += ch.length === 1 && unit >= 0xd800 && unit <= 0xdfff ? `%ED%${hex(0x80 | ((unit >> 6) & 0x3f))}%${hex(0x80 | (unit & 0x3f))}` : encodeURIComponent(ch);
  }
  return out;
}

/** Text that carries a deep nesting or an escaped lone surrogate, for bodies given as text. */
function textTags(text: string, into: Set<string>) {
  if (/^(?:\[|\{"a":){1000}/.test(text)) into.add('deep-nesting');
  if (/\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f])|(?<!\\ud[89ab][0-9a-f]{2})\\ud[c-f][0-9a-f]{2}/i.test(text) || /\p{Cs}/u.test(text)) into.add('lone-surrogate');
}

export function concretize(op: Operation, plan: RequestPlan, ctx: RunContext, baseUrl: string): ConcreteRequest {
  const tags = new Set<string>();
  const path = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const v = resolvePicks(plan.pathParams[name], ctx);
    if (v instanceof RawJson) return v.text;
    tagsOf(v, tags);
    const s = typeof v === 'string' ? v : toJsonText(v);
    return s === '' ? '%20' : encode(s);
  });
  const query = plan.query
    .map(([name, value, how]) => {
      const v = resolvePicks(value, ctx);
      if (how === 'raw') return `${encodeURIComponent(name)}=${String(v)}`;
      const text = typeof v === 'string' ? v : v === undefined ? '' : toJsonText(v);
      tagsOf(text, tags);
      // a megabyte of query only earns a 431 (long paths already do): the start of it is enough
      return `${encodeURIComponent(name)}=${encode(text.slice(0, 10_000))}`;
    })
    .join('&');
  const headers: Record<string, string> = { ...plan.headers };
  const c = plan.credentials;
  if (c.kind === 'jwt' || c.kind === 'both') headers.authorization = `Bearer ${ctx.jwt}`;
  if (c.kind === 'apiKey' || c.kind === 'both') headers['x-api-key'] = ctx.apiKey;
  if (c.kind === 'postmark') headers.authorization = `Basic ${ctx.postmarkBasic}`;
  if (c.kind === 'garbage') Object.assign(headers, c.headers);
  let body: string | undefined;
  if (plan.body && 'value' in plan.body) {
    const value = resolvePicks(plan.body.value, ctx);
    tagsOf(value, tags);
    body = toJsonText(value);
  } else if (plan.body) {
    body = plan.body.text;
    textTags(body, tags);
  }
  if (body !== undefined) headers['content-type'] = plan.contentType ?? 'application/json';
  else delete headers['content-encoding'];
  return { method: op.method, url: baseUrl + path + (query ? `?${query}` : ''), headers, body, tags };
}
