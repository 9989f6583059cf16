import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export type Answer = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export interface LocalReceiver {
  port: number;
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** every request that reached the receiver, in order */
  requests: ReceivedRequest[];
  close(): Promise<void>;
}

/**
 * A webhook endpoint on all loopback addresses (127.0.0.1 and ::1), answering each path with its
 * handler (404 otherwise) and recording what arrived.
 */
export async function startLocalReceiver(routes: Record<string, Answer>): Promise<LocalReceiver> {
  const requests: ReceivedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      requests.push({ method: req.method ?? '', path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const route = routes[path.split('?')[0]];
      if (route) route(req, res);
      else res.writeHead(404).end('no such hook');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '::', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port nothing listens on (bound, then released). */
export async function unusedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
