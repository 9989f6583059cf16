import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PostmarkApi {
  /** POSTMARK_API_URL */
  url: string;
  /** bodies of POST /email, in arrival order */
  sent: Record<string, any>[];
  /**
   * The next POST /email is answered only when `release()` is called, with `messageId` as its MessageID:
   * the provider's id exists (and its webhooks can arrive) before the service has recorded it.
   */
  holdNext(messageId: string): { received: Promise<Record<string, any>>; release(): void };
  close(): Promise<void>;
}

/** Plays Postmark's `POST /email` on 127.0.0.1, answering with the ids tests choose. */
export async function startPostmarkApi(): Promise<PostmarkApi> {
  const sent: Record<string, any>[] = [];
  const holds: { messageId: string; onReceived(body: Record<string, any>): void; released: Promise<void> }[] = [];
  let counter = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      if (req.method !== 'POST' || req.url !== '/email') return void res.writeHead(404).end();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      sent.push(body);
      const hold = holds.shift();
      if (hold) {
        hold.onReceived(body);
        await hold.released;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ To: body.To, SubmittedAt: new Date().toISOString(), MessageID: hold?.messageId ?? `pm-${++counter}`, ErrorCode: 0, Message: 'OK' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    sent,
    holdNext(messageId) {
      let release!: () => void;
      let onReceived!: (body: Record<string, any>) => void;
      const released = new Promise<void>((r) => (release = r));
      const received = new Promise<Record<string, any>>((r) => (onReceived = r));
      holds.push({ messageId, onReceived, released });
      return { received, release };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
