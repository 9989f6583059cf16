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

interface Node {
  value: object;
  key: string | number | undefined;
  parent: Node | undefined;
  depth: number;
}

/** `contacts[3].firstName`: the path from the root to a child of `node` (or to `node` itself). */
function fieldOf(node: Node | undefined, key?: string | number): string {
  const keys: (string | number)[] = key === undefined ? [] : [key];
  for (let n = node; n && n.key !== undefined; n = n.parent) keys.unshift(n.key);
  return keys.map((k, i) => (typeof k === 'number' ? `[${k}]` : i === 0 ? k : `.${k}`)).join('');
}

/**
 * The first string or key that PostgreSQL could not store, or the first array/object nested deeper
 * than `maxDepth`, with the field it is in. Iterative: a body of any depth cannot overflow the stack.
 */
export function findUnstorable(value: unknown, maxDepth = MAX_JSON_DEPTH): Finding | undefined {
  if (typeof value === 'string') {
    const flaw = flawOf(value);
    return flaw && { ...flaw, field: '', inKey: false };
  }
  if (!value || typeof value !== 'object') return undefined;
  const stack: Node[] = [{ value, key: undefined, parent: undefined, depth: 1 }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.depth > maxDepth) return { kind: 'depth', field: fieldOf(node), inKey: false };
    const isArray = Array.isArray(node.value);
    const keys: (string | number)[] = isArray ? [...(node.value as unknown[]).keys()] : Object.keys(node.value);
    // in reverse, so that the stack hands children back in document order
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i];
      if (!isArray) {
        const flaw = flawOf(key as string);
        if (flaw) return { ...flaw, field: fieldOf(node), inKey: true };
      }
      const child: unknown = (node.value as Record<string | number, unknown>)[key];
      if (typeof child === 'string') {
        const flaw = flawOf(child);
        if (flaw) return { ...flaw, field: fieldOf(node, key), inKey: false };
      } else if (child && typeof child === 'object') {
        stack.push({ value: child, key, parent: node, depth: node.depth + 1 });
      }
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
 */
export function rejectUnstorable(parts: Record<string, unknown>): void {
  for (const [where, value] of Object.entries(parts)) {
    const finding = findUnstorable(value);
    if (finding) throw badRequest(describe(where, finding));
  }
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
