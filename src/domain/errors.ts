import type { ZodError } from 'zod';

/**
 * The one error type of the service. Its message is the exact text the API promises (docs/api.md); src/http maps
 * it to `{message, error, statusCode}` in one place.
 */
export const STATUS_NAMES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

export class AppError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** extra fields for the response body, e.g. per-row import errors */
    readonly details?: Record<string, unknown>,
    /** response headers that belong to the answer, e.g. Retry-After */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const badRequest = (message: string, details?: Record<string, unknown>) => new AppError(400, message, details);
/**
 * A 400 for one field of a request, refused by a rule its schema cannot check (one that needs the
 * clock or the stored state): worded and listed as a schema's refusal is, `<field>: <message>` and `issues`.
 */
export const invalidField = (field: string, message: string) => badRequest(`${field}: ${message}`, { issues: [{ field, message }] });
export const unauthorized = (message = 'invalid API key') => new AppError(401, message);
export const forbidden = (message: string) => new AppError(403, message);
export const notFound = (message = 'Not Found') => new AppError(404, message);
export const conflict = (message: string) => new AppError(409, message);
export const tooManyRequests = (message: string) => new AppError(429, message);
/** A 429 that says when to come back, in its words (`…; try again in 15 minutes`) and in Retry-After (whole seconds, rounded up). */
export function throttled(message: string, retryAfterMs: number): AppError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  const [count, unit] = seconds < 60 ? [seconds, 'second'] : [Math.ceil(seconds / 60), 'minute'];
  const wait = `${count} ${unit}${count === 1 ? '' : 's'}`;
  return new AppError(429, `${message}; try again in ${wait}`, undefined, { 'Retry-After': String(seconds) });
}

/** A zod issue as one readable sentence naming the field: `to: Invalid email address`. */
export function describeZodError(err: ZodError): string {
  const { field, message } = listZodIssues(err, 1)[0];
  return field ? `${field}: ${message}` : message;
}

/** How many problems an answer lists: enough to fix a body in one round trip, never an answer larger than the request. */
export const MAX_LISTED_ISSUES = 100;

/** The problems of a rejected value (the first `max`), each with its field as a dotted path; `null` for the value as a whole. */
export function listZodIssues(err: ZodError, max = MAX_LISTED_ISSUES): { field: string | null; message: string }[] {
  const field = (path: PropertyKey[]) => (path.length ? path.map(String).join('.') : null);
  const listed: { field: string | null; message: string }[] = [];
  for (const issue of err.issues) {
    // zod reports unknown keys on their parent object; each is a field of its own to the client.
    const each = issue.code === 'unrecognized_keys' ? issue.keys.slice(0, max - listed.length).map((key) => ({ field: field([...issue.path, key]), message: 'unknown field' })) : [{ field: field(issue.path), message: issue.message }];
    for (const one of each) {
      if (listed.length === max) return listed;
      listed.push(one);
    }
  }
  return listed;
}
