import fc from 'fast-check';
import { deepNesting, oddInstant, oddNumber, oddString, wrongType } from './hostile.js';

/** The subset of JSON Schema (OpenAPI 3.0 flavour) the service's zod schemas turn into. */
export interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  nullable?: boolean;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
}

export interface Pools {
  /** ids the run has seen answered (created resources), picked by index when a request is made */
  ids: string[];
}

/** A reference into the id pool, resolved when the request is made: ids appear as the run creates them. */
export class PoolPick {
  constructor(readonly index: number) {}
}

function patterned(pattern: string): fc.Arbitrary<string> | undefined {
  try {
    return fc.stringMatching(new RegExp(pattern));
  } catch {
    return undefined;
  }
}

/** A value the schema accepts, or nearly: the arbitrary leans valid so requests get past validation. */
export function validish(schema: JsonSchema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 4) return fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean());
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives?.length) return fc.oneof(...alternatives.map((s) => validish(s, depth + 1)));
  const nullable = (a: fc.Arbitrary<unknown>) => (schema.nullable ? fc.option(a, { freq: 5 }) : a);
  switch (schema.type) {
    case 'string':
      return nullable(validString(schema));
    case 'integer': {
      const min = Math.max(schema.minimum ?? -1e6, Number.MIN_SAFE_INTEGER);
      const max = Math.min(schema.maximum ?? 1e6, Number.MAX_SAFE_INTEGER);
      return nullable(fc.integer({ min: Math.ceil(min), max: Math.max(Math.ceil(min), Math.floor(max)) }));
    }
    case 'number':
      return nullable(fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true }));
    case 'boolean':
      return nullable(fc.boolean());
    case 'array':
      return nullable(fc.array(validish(schema.items, depth + 1), { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 4, 4) }));
    case 'object':
    default: {
      const props = schema.properties ?? {};
      const required = new Set(schema.required ?? []);
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, s] of Object.entries(props)) record[name] = validish(s, depth + 1);
      const obj = fc.record(record, { requiredKeys: Object.keys(props).filter((k) => required.has(k)) });
      return nullable(schema.properties || schema.type === 'object' ? obj : fc.jsonValue({ maxDepth: 2 }));
    }
  }
}

function validString(schema: JsonSchema): fc.Arbitrary<unknown> {
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.min(schema.maxLength ?? 40, 40);
  switch (schema.format) {
    case 'email':
      return fc.oneof(fc.constantFrom('app@example.com', 'someone@example.org', 'admin@localhost'), fc.emailAddress());
    case 'uri':
      return fc.oneof({ arbitrary: fc.constantFrom('https://example.com/x', 'http://127.0.0.1:1/hook', 'http://localhost:1/x?y=1'), weight: 4 }, { arbitrary: fc.webUrl(), weight: 1 });
    case 'date-time':
      return fc.oneof(
        { arbitrary: fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString()), weight: 3 },
        { arbitrary: oddInstant, weight: 1 },
      );
    case 'cuid2':
      return fc.oneof(fc.nat().map((i) => new PoolPick(i)), fc.stringMatching(/^[a-z][0-9a-z]{23}$/));
  }
  const byPattern = schema.pattern ? patterned(schema.pattern) : undefined;
  if (byPattern) return byPattern;
  return fc.string({ minLength, maxLength: Math.max(minLength, maxLength) });
}

/** Any value where this schema's value goes: valid-ish mostly, hostile often. */
export function anyValue(schema: JsonSchema | undefined, depth = 0): fc.Arbitrary<unknown> {
  const hostile = schema?.type === 'string' ? fc.oneof(oddString, wrongType) : schema?.type === 'integer' || schema?.type === 'number' ? fc.oneof(oddNumber, wrongType) : wrongType;
  if (!schema || depth > 3) return fc.oneof({ arbitrary: validish(schema, depth), weight: 3 }, { arbitrary: hostile, weight: 1 });
  if (schema.type === 'object' && schema.properties) {
    // each field independently valid-ish or hostile, plus unknown and prototype-named keys
    const record: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [name, s] of Object.entries(schema.properties)) record[name] = anyValue(s, depth + 1);
    const required = new Set(schema.required ?? []);
    const fields = fc.record(record, { requiredKeys: Object.keys(schema.properties).filter((k) => required.has(k)) });
    const extra = fc.option(fc.dictionary(fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('__proto__', 'constructor', 'toString', '')), wrongType, { maxKeys: 2 }), { freq: 4 });
    const object = fc.tuple(fields, extra).map(([f, e]) => (e ? Object.assign(Object.create(null), e, f) : f));
    return fc.oneof({ arbitrary: object, weight: 8 }, { arbitrary: fc.array(object, { maxLength: 2 }), weight: 1 }, { arbitrary: hostile, weight: 1 }, { arbitrary: deepNesting, weight: 1 });
  }
  if (schema.type === 'array') {
    const items = fc.array(anyValue(schema.items, depth + 1), { maxLength: 6 });
    const many = fc.constantFrom(501, 2_000).chain((n) => fc.array(validish(schema.items, depth + 1), { minLength: n, maxLength: n }));
    return fc.oneof({ arbitrary: items, weight: 6 }, { arbitrary: hostile, weight: 1 }, { arbitrary: many, weight: 1 });
  }
  return fc.oneof({ arbitrary: validish(schema, depth), weight: 3 }, { arbitrary: hostile, weight: 2 });
}
