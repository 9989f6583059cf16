import { z, ZodError } from 'zod';
import { AppError, STATUS_NAMES, describeZodError, listZodIssues } from '../domain/errors.js';
import { ProviderError } from '../ports/email-provider.js';
import { WrongExpectedRevisionError } from '../ports/event-store.js';
import { RateLimiterUnavailable } from '../ports/rate-limiter.js';
import { isStoreUnavailable } from '../adapters/db/unavailable.js';

// A field left out reads `to: required`, not zod's `Invalid input: expected string, received undefined`.
// Global, so every schema words it alike (a schema's own message for the field still wins); set here,
// with the server, and not in src/domain, whose modules the dashboard's bundle also takes.
z.config({ customError: (issue) => (issue.code === 'invalid_type' && issue.input === undefined ? 'required' : undefined) });

export interface ErrorBody {
  message: string;
  error: string;
  statusCode: number;
  [extra: string]: unknown;
}

export function errorBody(status: number, message: string, extra?: Record<string, unknown>): ErrorBody {
  return { ...extra, message, error: STATUS_NAMES[status] ?? 'Error', statusCode: status };
}

export const MALFORMED_JSON = 'Malformed JSON in request body';
export const BODY_TOO_LARGE = 'Request body exceeds the 10 MB limit';

export const DATABASE_UNAVAILABLE = 'The database is unavailable (its connection was lost or refused); try again in a moment';
export const RATE_LIMITER_UNAVAILABLE = 'The rate limiter is unavailable (its store could not be reached); try again in a moment';

/**
 * The single place where anything thrown becomes the error shape `{message, error, statusCode}` (docs/api.md). Unknown errors
 * become a 500 without internals; `logged` tells the caller whether it should log the error.
 */
export function mapError(err: unknown): { status: number; body: ErrorBody; unexpected: boolean; headers?: Record<string, string> } {
  if (err instanceof AppError) {
    return { status: err.status, body: errorBody(err.status, err.message, err.details), unexpected: false, headers: err.headers };
  }
  if (err instanceof ProviderError) {
    return { status: 500, body: errorBody(500, `Provider error: ${err.message}`), unexpected: false };
  }
  if (err instanceof ZodError) {
    // `message` names the first problem; `issues` lists every one, so a client fixes a body in one round trip.
    return { status: 400, body: errorBody(400, describeZodError(err), { issues: listZodIssues(err) }), unexpected: false };
  }
  // body-parser / raw-body errors carry `type` and `status`
  const e = err as { type?: string; status?: number; statusCode?: number };
  if (e?.type === 'entity.parse.failed') {
    return { status: 400, body: errorBody(400, MALFORMED_JSON), unexpected: false };
  }
  if (e?.type === 'entity.too.large') {
    return { status: 413, body: errorBody(413, BODY_TOO_LARGE), unexpected: false };
  }
  if (e?.type === 'encoding.unsupported' || e?.type === 'charset.unsupported') {
    return { status: 415, body: errorBody(415, 'Unsupported request body encoding'), unexpected: false };
  }
  if (err instanceof WrongExpectedRevisionError) {
    // every retry of the command found the record changed again by another request: nothing was written by this one
    return { status: 409, body: errorBody(409, 'the record was changed by other requests at the same moment; try again'), unexpected: false, headers: { 'retry-after': '1' } };
  }
  if (isStoreUnavailable(err)) {
    // Nothing was wrong with the request: the client tries again, and the pool reconnects meanwhile.
    return { status: 503, body: errorBody(503, DATABASE_UNAVAILABLE), unexpected: false, headers: { 'retry-after': '1' } };
  }
  if (err instanceof RateLimiterUnavailable) {
    // Redis away: a sign-in or a refused key cannot be counted, and is not let through uncounted.
    return { status: 503, body: errorBody(503, RATE_LIMITER_UNAVAILABLE), unexpected: false, headers: { 'retry-after': '1' } };
  }
  const status = e?.status ?? e?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return { status, body: errorBody(status, STATUS_NAMES[status] ?? 'Bad Request'), unexpected: false };
  }
  return { status: 500, body: errorBody(500, 'Internal Server Error'), unexpected: true };
}
