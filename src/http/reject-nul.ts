import { badRequest } from '../domain/errors.js';

export function containsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (Array.isArray(value)) return value.some(containsNul);
  if (value && typeof value === 'object') return Object.entries(value).some(([k, v]) => k.includes('\u0000') || containsNul(v));
  return false;
}

/**
 * PostgreSQL stores no U+0000 in text or jsonb: a NUL anywhere in a request would fail deep in a
 * query as a 500 (or, in an event's data, as a failed append). Refused up front, naming where it was.
 * (In a path it names nothing that can exist: the app answers 404 for those.)
 */
export function rejectNul(parts: Record<string, unknown>): void {
  for (const [where, value] of Object.entries(parts)) {
    if (containsNul(value)) throw badRequest(`${where} contains a NUL character (U+0000), which is not accepted`);
  }
}

/**
 * The same value with every NUL character (U+0000) in its strings and keys replaced by U+FFFD: for
 * what a provider sends us, signed and genuine, which must be recorded rather than refused (a refused
 * bounce would be retried by the provider until it gives up, and the address never suppressed).
 */
export function replaceNul<T>(value: T): T {
  if (typeof value === 'string') return value.replaceAll('\u0000', '\ufffd') as T;
  if (Array.isArray(value)) return value.map(replaceNul) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [replaceNul(k), replaceNul(v)])) as T;
  }
  return value;
}
