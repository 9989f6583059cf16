/**
 * Whether `err` says the database (or the queue's Redis) could not be reached or dropped the
 * connection, rather than that a statement was wrong: such a request may succeed when tried again
 * once the server is back, so it is answered 503, not 500, and background loops retry it.
 */
export function isStoreUnavailable(err: unknown): boolean {
  for (let e = err as ErrorLike | undefined, depth = 0; e && depth < 5; e = e.cause as ErrorLike | undefined, depth++) {
    if (typeof e.code === 'string' && (UNREACHABLE_CODES.has(e.code) || e.code.startsWith('08') || SERVER_GOING_AWAY.has(e.code))) return true;
    // a Unix-domain socket whose server stopped (it removes the socket's file)
    if (e.code === 'ENOENT' && e.syscall === 'connect') return true;
    if (typeof e.message === 'string' && DROPPED_CONNECTION.test(e.message)) return true;
    if (e.name === 'KnexTimeoutError') return true;
    // A refused connection to both ::1 and 127.0.0.1 is an AggregateError whose parts carry the codes.
    if (Array.isArray(e.errors) && e.errors.some((part) => isStoreUnavailable(part))) return true;
  }
  return false;
}

interface ErrorLike {
  code?: unknown;
  syscall?: unknown;
  message?: unknown;
  name?: unknown;
  cause?: unknown;
  errors?: unknown[];
}

/** the socket could not be opened, or broke */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/**
 * PostgreSQL's own: admin_shutdown (pg_terminate_backend, a fast shutdown), crash_shutdown,
 * cannot_connect_now (starting up or in recovery), too_many_connections; class 08 (connection
 * exceptions) is matched by prefix.
 */
const SERVER_GOING_AWAY = new Set(['57P01', '57P02', '57P03', '53300']);
/** node-postgres reports a connection lost mid-query by message only (knex puts the statement before it) */
const DROPPED_CONNECTION = /(Connection terminated|Client has encountered a connection error|Connection is closed|terminating connection due to administrator command)/;
