import { createServer, type RequestListener, type Server } from 'node:http';
import type { Config } from '../config/env.js';

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
  return server;
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
