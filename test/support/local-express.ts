import type express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An express app on a free loopback port, for testing a response writer over real HTTP. */
export async function listenLocally(app: express.Express): Promise<{ base: string; close(): Promise<void> }> {
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // a client that went away leaves its keep-alive socket open until Node's timeout
        server.closeAllConnections();
      }),
  };
}
