import { ZodError } from 'zod';
import { AppError, STATUS_NAMES, describeZodError } from '../domain/errors.js';
import { ProviderError } from '../ports/email-provider.js';

export interface ErrorBody {
  message: string;
  error: string;
  statusCode: number;
  [extra: string]: unknown;
}

export function errorBody(status: number, message: string, extra?: Record<string, unknown>): ErrorBody {
  return { ...extra, message, error: STATUS_NAMES[status] ?? 'Error', statusCode: status };
}

/**
 * The single place where anything thrown becomes the spec's error shape (SPEC.md §7). Unknown errors
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
    return { status: 400, body: errorBody(400, describeZodError(err)), unexpected: false };
  }
  // body-parser / raw-body errors carry `type` and `status`
  const e = err as { type?: string; status?: number; statusCode?: number };
  if (e?.type === 'entity.parse.failed') {
    return { status: 400, body: errorBody(400, 'Malformed JSON in request body'), unexpected: false };
  }
  if (e?.type === 'entity.too.large') {
    return { status: 413, body: errorBody(413, 'Request body exceeds the 10 MB limit'), unexpected: false };
  }
  if (e?.type === 'encoding.unsupported' || e?.type === 'charset.unsupported') {
    return { status: 415, body: errorBody(415, 'Unsupported request body encoding'), unexpected: false };
  }
  const status = e?.status ?? e?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return { status, body: errorBody(status, STATUS_NAMES[status] ?? 'Bad Request'), unexpected: false };
  }
  return { status: 500, body: errorBody(500, 'Internal Server Error'), unexpected: true };
}
