import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface WebhookSink {
  url: string;
  /** every POST received: the X-Service-Event header and the parsed JSON body */
  received: { event: string | undefined; body: any }[];
  close(): Promise<void>;
}

/** A customer endpoint on 127.0.0.1 that answers every webhook 200 and keeps what it got. */
export async function startWebhookSink(): Promise<WebhookSink> {
  const received: WebhookSink['received'] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const event = req.headers['x-service-event'];
      received.push({ event: typeof event === 'string' ? event : undefined, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null') });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
