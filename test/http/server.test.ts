import { expect } from 'chai';
import type { Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { createApp } from '../../src/http/app.js';
import { defineRoute } from '../../src/http/route.js';
import { listen, type HttpTimeouts } from '../../src/http/server.js';
import { createLogger } from '../../src/logger.js';

// Shortened for the test; the defaults are tens of seconds.
const TIMEOUTS: HttpTimeouts = { HTTP_HEADERS_TIMEOUT_MS: 400, HTTP_REQUEST_TIMEOUT_MS: 1200, HTTP_KEEP_ALIVE_TIMEOUT_MS: 300 };

interface Conversation {
  socket: Socket;
  /** everything the server wrote, once it closed the connection */
  closed: Promise<string>;
}

function open(port: number, onConnect: (socket: Socket) => void = () => {}): Conversation {
  const socket = connect(port, '127.0.0.1', () => onConnect(socket));
  let received = '';
  socket.on('data', (d) => (received += d));
  socket.on('error', () => {});
  const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(received)));
  return { socket, closed };
}

/** Writes `text` one character at a time, `everyMs` apart, until the socket closes. */
function trickle(socket: Socket, text: string, everyMs: number): void {
  let i = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || i >= text.length) return clearInterval(timer);
    socket.write(text[i++]);
  }, everyMs);
  socket.once('close', () => clearInterval(timer));
}

describe('HTTP server timeouts (slow and idle clients)', function () {
  // each case ends by the server's own timeout, well within this
  this.timeout(10_000);
  let server: Server;
  let port: number;

  before(async () => {
    const echo = defineRoute({
      method: 'post',
      path: '/echo',
      summary: 'echo',
      tag: 't',
      auth: { kind: 'public' },
      responses: {},
      handler: ({ body }) => ({ status: 200, body }),
    });
    const app = createApp({ routes: [echo], authenticate: async () => undefined, logger: createLogger('silent'), baseUrl: 'http://127.0.0.1' });
    server = await listen(app, TIMEOUTS, 0, '127.0.0.1');
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('a connection that never sends a byte is answered 408 (in the API\'s error shape) and closed', async () => {
    const received = await open(port).closed;
    expect(received).to.match(/^HTTP\/1\.1 408 /);
    expect(JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4))).to.deep.equal({ message: 'the request was not received in time', error: 'Request Timeout', statusCode: 408 });
  });

  it('headers sent too slowly: 408 and closed', async () => {
    const { socket, closed } = open(port, (s) => trickle(s, 'POST /echo HTTP/1.1\r\nHost: x\r\nX-Slow: ' + 'a'.repeat(1000), 50));
    expect(await closed).to.match(/^HTTP\/1\.1 408 /);
    expect(socket.destroyed).to.equal(true);
  });

  it('headers in time, then a body too slow to arrive within the request timeout: 408 and closed', async () => {
    const body = JSON.stringify({ padding: 'x'.repeat(500) });
    const { closed } = open(port, (s) => {
      s.write(`POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
      trickle(s, body, 50);
    });
    expect(await closed).to.match(/^HTTP\/1\.1 408 /);
  });

  it('an idle keep-alive connection is closed after its request was answered (sooner than Node\'s 5 s default)', async function () {
    this.timeout(3_000);
    const { closed } = open(port, (s) => s.write('POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 8\r\n\r\n{"a":1}\n'));
    const received = await closed;
    expect(received).to.match(/^HTTP\/1\.1 200 /);
    expect(received).to.include('{"a":1}');
    // one answer, and no 408 after it (a bare '408' could be in the random X-Request-Id)
    expect(received.match(/^HTTP\/1\.1 /gm)).to.have.length(1);
  });

  it("what Node's parser refuses is answered in the API's error shape, and closed: bytes past the Content-Length, headers too large", async () => {
    const overrun = open(port, (s) => s.write('POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{"to":"a@b.com"}'));
    const first = await overrun.closed;
    // the first ten bytes were a request (refused by the JSON parser); what follows is no request
    const last = first.slice(first.lastIndexOf('HTTP/1.1 '));
    expect(last).to.match(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(last).to.include('Content-Type: application/json');
    expect(JSON.parse(last.slice(last.indexOf('\r\n\r\n') + 4))).to.deep.equal({ message: 'malformed HTTP request', error: 'Bad Request', statusCode: 400 });

    const huge = open(port, (s) => s.write(`GET /${'x'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`));
    const answer = await huge.closed;
    expect(answer).to.match(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).to.deep.equal({ message: 'request headers (or the URL) are too large', error: 'Request Header Fields Too Large', statusCode: 431 });
  });

  it('a request sent at a normal pace is served', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ big: 'x'.repeat(5_000_000) }) });
    expect(res.status).to.equal(200);
    expect((await res.json()).big).to.have.length(5_000_000);
  });
});
