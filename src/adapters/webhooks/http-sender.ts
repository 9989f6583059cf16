import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { resolveAllowedTarget, type Lookup, type ResolvedAddress } from './ssrf-guard.js';

export interface PostResult {
  /** the receiver's status; present once its response headers arrived */
  status?: number;
  networkError?: string;
  timedOut?: boolean;
  retryAfter?: string;
  /** the first bytes of the response body, for the delivery log */
  responseSnippet?: string;
}

export interface WebhookSenderOptions {
  /** one budget for DNS, connect, sending and the response */
  timeoutMs: number;
  allowPrivateTargets: boolean;
  userAgent?: string;
  /** DNS resolution; the system resolver unless replaced (tests map names to 127.0.0.1) */
  lookup?: Lookup;
}

/** Enough of a body to show in the dashboard; the rest is never read. */
export const MAX_RESPONSE_BYTES = 4096;
const DEFAULT_USER_AGENT = 'CourierLedger-Webhooks/1.0';

/** A lookup that always answers with the address already checked: the socket cannot be re-pointed by DNS. */
function pinnedLookup(target: ResolvedAddress): LookupFunction {
  return (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as (e: null, a: ResolvedAddress[]) => void)(null, [target]);
    else callback(null, target.address, target.family);
  };
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * POSTs webhooks. The host is resolved once and checked by the SSRF guard; the socket then connects to
 * exactly that address (a pinned lookup, so a DNS rebinding between check and connect changes nothing)
 * while the Host header and TLS SNI keep the name. Redirects are returned, never followed. Nothing
 * throws: every outcome is a PostResult for classifyAttempt.
 */
export function createWebhookSender(options: WebhookSenderOptions) {
  const userAgent = options.userAgent ?? DEFAULT_USER_AGENT;

  return {
    post(req: { url: string; headers: Record<string, string>; body: string }): Promise<PostResult> {
      return new Promise<PostResult>((resolve) => {
        let settled = false;
        let request: http.ClientRequest | undefined;
        // what the receiver said so far: once it answered, a body that stalls or breaks changes nothing
        let answer: { status: number; retryAfter?: string; chunks: Buffer[]; size: number } | undefined;

        const answered = (): PostResult => ({
          status: answer!.status,
          ...(answer!.retryAfter !== undefined ? { retryAfter: answer!.retryAfter } : {}),
          responseSnippet: Buffer.concat(answer!.chunks).toString('utf8'),
        });
        const finish = (result: PostResult) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          request?.destroy();
          resolve(result);
        };
        const timer = setTimeout(
          () => finish(answer ? answered() : { timedOut: true, networkError: `no response within ${options.timeoutMs} ms` }),
          options.timeoutMs,
        );

        resolveAllowedTarget(req.url, { allowPrivateTargets: options.allowPrivateTargets, lookup: options.lookup, lookupTimeoutMs: options.timeoutMs }).then(
          (addresses) => {
            if (settled) return;
            const url = new URL(req.url);
            const client = url.protocol === 'https:' ? https : http;
            request = client.request(
              url,
              {
                method: 'POST',
                lookup: pinnedLookup(addresses[0]),
                agent: false,
                headers: {
                  ...req.headers,
                  'content-length': String(Buffer.byteLength(req.body)),
                  'user-agent': userAgent,
                  connection: 'close',
                },
              },
              (res) => {
                const retryAfter = res.headers['retry-after'];
                answer = { status: res.statusCode ?? 0, retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined, chunks: [], size: 0 };
                res.on('data', (chunk: Buffer) => {
                  const room = MAX_RESPONSE_BYTES - answer!.size;
                  answer!.chunks.push(chunk.subarray(0, room));
                  answer!.size += Math.min(chunk.length, room);
                  if (answer!.size >= MAX_RESPONSE_BYTES) finish(answered());
                });
                res.on('end', () => finish(answered()));
                res.on('error', () => finish(answered()));
                res.on('close', () => finish(answered()));
              },
            );
            request.on('error', (err) => finish(answer ? answered() : { networkError: errorText(err) }));
            request.end(req.body);
          },
          (err) => finish({ networkError: errorText(err) }),
        );
      });
    },
  };
}
export type WebhookSender = ReturnType<typeof createWebhookSender>;
