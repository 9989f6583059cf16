import { createServer, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Config } from '../config/env.js';
import { STATUS_NAMES } from '../domain/errors.js';

export type HttpTimeouts = Pick<Config, 'HTTP_HEADERS_TIMEOUT_MS' | 'HTTP_REQUEST_TIMEOUT_MS' | 'HTTP_KEEP_ALIVE_TIMEOUT_MS'>;

/**
 * The HTTP server of the API, with its timeouts set deliberately: a client that sends nothing, or
 * headers or a body too slowly, would otherwise hold a connection (and its memory) for minutes.
 * Node answers such a connection 408 and closes it; it checks every `connectionsCheckingInterval`,
 * so that interval is a fraction of the headers timeout rather than Node's fixed 30 s.
 */
export function createHttpServer(app: RequestListener, timeouts: HttpTimeouts): Server {
  const server = createServer(
    {
      headersTimeout: timeouts.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeout: timeouts.HTTP_REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: Math.max(50, Math.min(5000, Math.floor(timeouts.HTTP_HEADERS_TIMEOUT_MS / 4))),
    },
    app,
  );
  server.keepAliveTimeout = timeouts.HTTP_KEEP_ALIVE_TIMEOUT_MS;
  server.on('clientError', answerClientError);
  return server;
}

/**
 * Stops taking requests: no new connections, idle keep-alive ones closed now, and each busy one closed
 * once its request is answered (`Connection: close`). `server.close()` alone leaves a keep-alive
 * connection in use open, and a client (a load balancer) reusing it back to back kept the process
 * answering until its shutdown timed out. Resolves once every connection is gone.
 */
export function drain(server: Server): Promise<void> {
  server.prependListener('request', (_req, res: ServerResponse) => res.setHeader('connection', 'close'));
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  return closed;
}

/** What Node refuses before the app sees a request, by its parser's error code. */
const CLIENT_ERRORS: Record<string, [number, string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'the request was not received in time'],
  HPE_HEADER_OVERFLOW: [431, 'request headers (or the URL) are too large'],
};

/**
 * A request Node's parser refuses (a Content-Length the body does not match, headers or a URL too
 * large, a request that does not arrive in time) is answered in the API's error shape too, where Node
 * would write a bare status line. The connection is closed: its bytes cannot be trusted further.
 */
function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable || err.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const [status, message] = CLIENT_ERRORS[err.code ?? ''] ?? [400, 'malformed HTTP request'];
  const body = JSON.stringify({ message, error: STATUS_NAMES[status], statusCode: status });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_NAMES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** The API's server listening on `port` (and `host`, when given), once it listens. */
export async function listen(app: RequestListener, timeouts: HttpTimeouts, port: number, host?: string): Promise<Server> {
  const server = createHttpServer(app, timeouts);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    const listening = () => {
      server.off('error', reject);
      resolve();
    };
    if (host === undefined) server.listen(port, listening);
    else server.listen(port, host, listening);
  });
  return server;
}
