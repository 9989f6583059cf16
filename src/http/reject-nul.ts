import { badRequest } from '../domain/errors.js';
import { MAX_JSON_DEPTH, tooDeep } from './json-depth.js';

/**
 * What PostgreSQL cannot store: a NUL (U+0000) in text or jsonb, and in jsonb an unpaired UTF-16
 * surrogate (JSON.stringify writes it as `\ud800`, which jsonb refuses). Either would fail deep in a
 * query or an event append as a 500.
 */
type Flaw = { kind: 'nul' } | { kind: 'surrogate'; unit: number };

// With the `u` flag a paired surrogate is one code point (not Cs): only a lone one matches.
const LONE_SURROGATE = /\p{Cs}/u;

function flawOf(s: string): Flaw | undefined {
  if (s.includes('\u0000')) return { kind: 'nul' };
  const m = LONE_SURROGATE.exec(s);
  return m ? { kind: 'surrogate', unit: m[0].charCodeAt(0) } : undefined;
}

export type Finding = (Flaw & { field: string; inKey: boolean }) | { kind: 'depth'; field: string; inKey: false };

interface Frame {
  value: object;
  /** the object's keys; undefined for an array (its indexes) */
  keys: string[] | undefined;
  length: number;
  next: number;
  key: string | number | undefined;
  parent: Frame | undefined;
  depth: number;
}

/** `contacts[3].firstName`: the path from the root to a child of `frame` (or to `frame` itself). */
function fieldOf(frame: Frame | undefined, key?: string | number): string {
  const keys: (string | number)[] = key === undefined ? [] : [key];
  for (let f = frame; f && f.key !== undefined; f = f.parent) keys.unshift(f.key);
  return keys.map((k, i) => (typeof k === 'number' ? `[${k}]` : i === 0 ? k : `.${k}`)).join('');
}

function frame(value: object, key: string | number | undefined, parent: Frame | undefined): Frame {
  const keys = Array.isArray(value) ? undefined : Object.keys(value);
  const length = keys ? keys.length : (value as unknown[]).length;
  return { value, keys, length, next: 0, key, parent, depth: parent ? parent.depth + 1 : 1 };
}

/**
 * The first string or key (in document order) that PostgreSQL could not store, or the first
 * array/object nested deeper than `maxDepth`, with the field it is in. Iterative: a body of any depth
 * cannot overflow the stack.
 */
export function findUnstorable(value: unknown, maxDepth = MAX_JSON_DEPTH): Finding | undefined {
  if (typeof value === 'string') {
    const flaw = flawOf(value);
    return flaw && { ...flaw, field: '', inKey: false };
  }
  if (!value || typeof value !== 'object') return undefined;
  const stack: Frame[] = [frame(value, undefined, undefined)];
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    if (top.depth > maxDepth) return { kind: 'depth', field: fieldOf(top), inKey: false };
    if (top.next >= top.length) {
      stack.pop();
      continue;
    }
    const key: string | number = top.keys ? top.keys[top.next] : top.next;
    top.next++;
    if (typeof key === 'string') {
      const flaw = flawOf(key);
      if (flaw) return { ...flaw, field: fieldOf(top), inKey: true };
    }
    const child: unknown = (top.value as Record<string | number, unknown>)[key];
    if (typeof child === 'string') {
      const flaw = flawOf(child);
      if (flaw) return { ...flaw, field: fieldOf(top, key), inKey: false };
    } else if (child && typeof child === 'object') {
      stack.push(frame(child, key, top));
    }
  }
  return undefined;
}

function describe(where: string, finding: Finding): string {
  if (finding.kind === 'depth') return tooDeep(where).message;
  const what =
    finding.kind === 'nul'
      ? 'a NUL character (U+0000)'
      : `an unpaired UTF-16 surrogate (U+${finding.unit.toString(16).toUpperCase()})`;
  const at = finding.inKey ? (finding.field ? ` in a key of ${finding.field}` : ' in a key') : finding.field ? ` in ${finding.field}` : '';
  return `${where} contains ${what}${at}, which is not accepted`;
}

/**
 * Refuses (400, naming where and which field) a request whose body or query holds what PostgreSQL
 * cannot store, or nests deeper than the limit: one check for every route, before any handler.
 * (In a path it names nothing that can exist: the app answers 404 for those.)
 */
export function rejectUnstorable(parts: Record<string, unknown>): void {
  for (const [where, value] of Object.entries(parts)) {
    const problem = unstorableProblem(where, value);
    if (problem) throw badRequest(problem);
  }
}

/** What of `value` PostgreSQL could not store, in the words of a refusal naming `where` and the field; undefined when none. */
export function unstorableProblem(where: string, value: unknown): string | undefined {
  const finding = findUnstorable(value);
  return finding && describe(where, finding);
}

const NUL_OR_LONE_SURROGATE = /\u0000|\p{Cs}/gu;

/**
 * The same value with every NUL character (U+0000) and unpaired surrogate in its strings and keys
 * replaced by U+FFFD: for what a provider sends us, signed and genuine, which must be recorded rather
 * than refused (a refused bounce would be retried by the provider until it gives up, and the address
 * never suppressed). Refuses (400) a value nested deeper than the limit rather than recursing into it.
 */
export function toStorable<T>(value: T, where = 'request body', depth = 0): T {
  if (typeof value === 'string') return value.replace(NUL_OR_LONE_SURROGATE, '\ufffd') as T;
  if (!value || typeof value !== 'object') return value;
  if (depth >= MAX_JSON_DEPTH) throw tooDeep(where);
  if (Array.isArray(value)) return value.map((v) => toStorable(v, where, depth + 1)) as T;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [toStorable(k), toStorable(v, where, depth + 1)])) as T;
}
