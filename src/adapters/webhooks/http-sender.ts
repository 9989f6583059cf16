import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { AppError } from '../../domain/errors.js';
import { resolveAllowedTarget, type Lookup } from './ssrf-guard.js';

export interface PostResult {
  status?: number;
  networkError?: string;
  timedOut?: boolean;
  retryAfter?: string;
  responseSnippet?: string;
}

const MAX_RESPONSE_BYTES = 4096;

/**
 * POSTs a webhook. DNS is resolved once and checked (SSRF guard); the socket connects to exactly that
 * address (no second lookup a DNS rebinding could change) while Host and TLS SNI keep the name.
 * Redirects are returned, never followed. One timeout covers connect, request and response.
 */
export function createWebhookSender(options: { timeoutMs: number; allowPrivateTargets: boolean; userAgent?: string; lookup?: Lookup }) {
  return {
    async post(req: { url: string; headers: Record<string, string>; body: string }): Promise<PostResult> {
      let addresses: { address: string; family: number }[];
      try {
        addresses = await resolveAllowedTarget(req.url, { allowPrivateTargets: options.allowPrivateTargets, lookup: options.lookup });
      } catch (err) {
        return { networkError: err instanceof AppError ? err.message : String(err) };
      }
      const target = addresses[0];
      const pinned: LookupFunction = (_host, opts, cb) => {
        if ((opts as { all?: boolean }).all) (cb as any)(null, [target]);
        else cb(null, target.address, target.family);
      };
      const url = new URL(req.url);
      const client = url.protocol === 'https:' ? https : http;
      return new Promise<PostResult>((resolve) => {
        let settled = false;
        const done = (r: PostResult) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(r);
        };
        const request = client.request(
          url,
          {
            method: 'POST',
            lookup: pinned,
            headers: {
              ...req.headers,
              'content-length': String(Buffer.byteLength(req.body)),
              'user-agent': options.userAgent ?? 'CourierLedger-Webhooks/1.0',
            },
            agent: false,
          },
          (res) => {
            let size = 0;
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => {
              if (size < MAX_RESPONSE_BYTES) chunks.push(chunk.subarray(0, MAX_RESPONSE_BYTES - size));
              size += chunk.length;
            });
            res.on('end', () =>
              done({
                status: res.statusCode,
                retryAfter: typeof res.headers['retry-after'] === 'string' ? res.headers['retry-after'] : undefined,
                responseSnippet: Buffer.concat(chunks).toString('utf8'),
              }),
            );
            res.on('error', (err) => done({ status: res.statusCode, networkError: err.message }));
          },
        );
        const timer = setTimeout(() => {
          done({ timedOut: true, networkError: `no response within ${options.timeoutMs} ms` });
          request.destroy();
        }, options.timeoutMs);
        request.on('error', (err) => done({ networkError: err.message }));
        request.end(req.body);
      });
    },
  };
}
export type WebhookSender = ReturnType<typeof createWebhookSender>;
