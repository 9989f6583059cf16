import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { createWebhookSender, MAX_RESPONSE_BYTES, type PostResult } from '../../../src/adapters/webhooks/http-sender.js';
import type { Lookup } from '../../../src/adapters/webhooks/ssrf-guard.js';
import { classifyAttempt } from '../../../src/domain/webhooks/classify-response.js';
import { startLocalReceiver, unusedPort, type Answer, type LocalReceiver } from './local-receiver.js';

const body = JSON.stringify({ id: 'evt_1', event: 'contact.unsubscribed', occurredAt: '2024-05-01T12:00:00.000Z', data: { email: 'zoë@example.com' } });
const headers = {
  'content-type': 'application/json',
  'x-service-event': 'contact.unsubscribed',
  'x-service-delivery': 'ck_delivery_1',
  'x-service-timestamp': '1714564800',
  'x-service-signature': 'v1=abc',
  'x-service-attempt': '1',
};

const status = (code: number, extra: Record<string, string> = {}, text = `status ${code}`): Answer => (_req, res) => res.writeHead(code, extra).end(text);

describe('webhook HTTP sender', () => {
  let receiver: LocalReceiver;
  beforeEach(async () => {
    receiver = await startLocalReceiver({
      '/ok': status(200, {}, 'thanks'),
      '/no-content': (_req, res) => res.writeHead(204).end(),
      '/moved': (_req, res) => res.writeHead(301, { location: `http://127.0.0.1:${receiver.port}/target` }).end(),
      '/target': status(200),
      '/gone': status(410),
      '/slow-down': status(429, { 'retry-after': '120' }),
      '/unavailable': status(503, { 'retry-after': 'Wed, 01 May 2024 12:05:00 GMT' }),
      '/request-timeout': status(408),
      '/broken': status(500, {}, 'stack trace'),
      '/silent': () => {},
      '/headers-only': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('partial');
      },
      '/huge': (_req, res) => {
        res.writeHead(200);
        res.end('x'.repeat(1024 * 1024));
      },
    });
  });
  afterEach(async () => {
    await receiver.close();
  });

  const sender = (extra: { timeoutMs?: number; lookup?: Lookup; userAgent?: string } = {}) =>
    createWebhookSender({ timeoutMs: extra.timeoutMs ?? 5000, allowPrivateTargets: true, ...extra });
  const post = (path: string, extra?: Parameters<typeof sender>[0]) => sender(extra).post({ url: `${receiver.url}${path}`, headers, body });

  describe('answers of a reachable receiver (private targets allowed)', () => {
    it('POSTs the exact body with the given headers, a Content-Length and a User-Agent', async () => {
      const result = await post('/ok', { userAgent: 'TestAgent/2' });
      expect(result).to.deep.equal({ status: 200, responseSnippet: 'thanks' });
      expect(receiver.requests).to.have.length(1);
      const [received] = receiver.requests;
      expect(received.method).to.equal('POST');
      expect(received.body).to.equal(body);
      expect(received.headers['content-length']).to.equal(String(Buffer.byteLength(body)));
      expect(received.headers['user-agent']).to.equal('TestAgent/2');
      for (const [name, value] of Object.entries(headers)) expect(received.headers[name], name).to.equal(value);
    });

    it('reports 204 as delivered', async () => {
      const result = await post('/no-content');
      expect(result.status).to.equal(204);
      expect(classifyAttempt(result)).to.equal('delivered');
    });

    it('returns a 301 as it is and never follows it', async () => {
      const result = await post('/moved');
      expect(result.status).to.equal(301);
      expect(classifyAttempt(result)).to.equal('retry');
      await new Promise((r) => setTimeout(r, 50));
      expect(receiver.requests.map((r) => r.path)).to.deep.equal(['/moved']);
    });

    it('reports 404 and 410 as permanent failures', async () => {
      for (const path of ['/not-there', '/gone']) {
        const result = await post(path);
        expect(result.status, path).to.equal(path === '/gone' ? 410 : 404);
        expect(classifyAttempt(result), path).to.equal('failed');
      }
    });

    it('reports 408 as retryable', async () => {
      const result = await post('/request-timeout');
      expect(result.status).to.equal(408);
      expect(classifyAttempt(result)).to.equal('retry');
    });

    it('passes on Retry-After with a 429 and a 503', async () => {
      const limited = await post('/slow-down');
      expect(limited).to.include({ status: 429, retryAfter: '120' });
      expect(classifyAttempt(limited)).to.equal('retry');
      const unavailable = await post('/unavailable');
      expect(unavailable).to.include({ status: 503, retryAfter: 'Wed, 01 May 2024 12:05:00 GMT' });
      expect(classifyAttempt(unavailable)).to.equal('retry');
    });

    it('reports a 500 with the start of its body', async () => {
      const result = await post('/broken');
      expect(result).to.deep.equal({ status: 500, responseSnippet: 'stack trace' });
      expect(classifyAttempt(result)).to.equal('retry');
    });

    it('reads at most a few KB of a large body', async () => {
      const started = Date.now();
      const result = await post('/huge');
      expect(result.status).to.equal(200);
      expect(result.responseSnippet).to.have.length(MAX_RESPONSE_BYTES);
      expect(Date.now() - started).to.be.below(2000);
    });
  });

  describe('failures to get an answer', () => {
    it('reports a refused connection as a network error', async () => {
      const port = await unusedPort();
      const result = await sender().post({ url: `http://127.0.0.1:${port}/hook`, headers, body });
      expect(result.status).to.equal(undefined);
      expect(result.networkError).to.match(/ECONNREFUSED/);
      expect(classifyAttempt(result)).to.equal('retry');
    });

    it('gives up on a receiver that never answers after timeoutMs', async () => {
      const started = Date.now();
      const result = await post('/silent', { timeoutMs: 300 });
      const elapsed = Date.now() - started;
      expect(result).to.deep.equal({ timedOut: true, networkError: 'no response within 300 ms' });
      expect(elapsed).to.be.within(250, 1500);
      expect(classifyAttempt(result)).to.equal('retry');
      expect(receiver.requests.map((r) => r.path)).to.deep.equal(['/silent']);
    });

    it('keeps the status of a receiver that answered but never finished its body', async () => {
      const result = await post('/headers-only', { timeoutMs: 300 });
      expect(result).to.deep.equal({ status: 200, responseSnippet: 'partial' });
    });

    it('counts a DNS answer that never comes against the same timeout', async () => {
      const started = Date.now();
      const result = await sender({ timeoutMs: 200, lookup: () => new Promise(() => {}) }).post({ url: 'http://hooks.example.test/hook', headers, body });
      expect(result.timedOut).to.equal(true);
      expect(Date.now() - started).to.be.below(1500);
    });

    it('reports a name that does not resolve as a network error', async () => {
      const result = await sender({ lookup: async () => [] }).post({ url: 'http://hooks.example.test/hook', headers, body });
      expect(result.networkError).to.match(/does not resolve/);
    });
  });

  describe('connecting to the checked address', () => {
    it('resolves once and connects to that address, keeping the name in Host', async () => {
      let lookups = 0;
      // a rebinding resolver: the first answer is the receiver, any later one would be elsewhere
      const lookup: Lookup = async () => (lookups++ === 0 ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '10.255.255.1', family: 4 }]);
      const result = await sender({ lookup }).post({ url: `http://hooks.example.test:${receiver.port}/ok`, headers, body });
      expect(result.status).to.equal(200);
      expect(lookups).to.equal(1);
      expect(receiver.requests[0].headers.host).to.equal(`hooks.example.test:${receiver.port}`);
    });

    it('sends the host name as TLS SNI while connecting to the checked address', async () => {
      const seen: string[] = [];
      const fixture = (name: string) => readFileSync(new URL(`../../fixtures/sns/${name}`, import.meta.url));
      const tls = https.createServer(
        {
          key: fixture('signing-key.pem'),
          cert: fixture('signing-cert.pem'),
          SNICallback: (servername, cb) => {
            seen.push(servername);
            cb(null, undefined);
          },
        },
        (_req, res) => res.end('ok'),
      );
      await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = tls.address() as AddressInfo;
        const lookup: Lookup = async () => [{ address: '127.0.0.1', family: 4 }];
        const result: PostResult = await sender({ lookup }).post({ url: `https://hooks.example.test:${port}/hook`, headers, body });
        // the self-signed test certificate is (rightly) not trusted; what matters is where and to whom we spoke
        expect(result.networkError).to.match(/certificate/);
        expect(seen).to.deep.equal(['hooks.example.test']);
      } finally {
        tls.closeAllConnections();
        await new Promise<void>((resolve) => tls.close(() => resolve()));
      }
    });
  });

  describe('SSRF refusals (private targets not allowed)', () => {
    const guarded = () => createWebhookSender({ timeoutMs: 5000, allowPrivateTargets: false });

    it('refuses loopback, private, link-local and metadata targets without sending anything', async () => {
      const port = receiver.port;
      for (const url of [
        `http://127.0.0.1:${port}/ok`,
        `http://localhost:${port}/ok`,
        `http://[::1]:${port}/ok`,
        `http://[::ffff:127.0.0.1]:${port}/ok`,
        'http://10.0.0.1/ok',
        'http://169.254.169.254/latest/meta-data/',
      ]) {
        const started = Date.now();
        const result = await guarded().post({ url, headers, body });
        expect(result.status, url).to.equal(undefined);
        expect(result.networkError, url).to.match(/may not target it/);
        expect(Date.now() - started, url).to.be.below(1000);
      }
      expect(receiver.requests).to.deep.equal([]);
    });

    it('refuses a name when any of its addresses is private', async () => {
      const lookup: Lookup = async () => [
        { address: '93.184.215.14', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ];
      const result = await createWebhookSender({ timeoutMs: 5000, allowPrivateTargets: false, lookup }).post({
        url: `http://hooks.example.test:${receiver.port}/ok`,
        headers,
        body,
      });
      expect(result.networkError).to.match(/127\.0\.0\.1/);
      expect(receiver.requests).to.deep.equal([]);
    });

    it('refuses non-http schemes', async () => {
      const result = await guarded().post({ url: 'ftp://example.com/hook', headers, body });
      expect(result.networkError).to.match(/http or https/);
    });
  });
});
