import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from './read-body.js';

/**
 * A local Postmark API speaking its wire protocol: `POST /email` with `X-Postmark-Server-Token`,
 * answering `{To, SubmittedAt, MessageID, ErrorCode: 0, Message: "OK"}`, or an error status with
 * `{ErrorCode, Message}` as Postmark does (401 bad token, 422 with a code, 429, 500). It records
 * what it received. `GET /messages/outbound` searches what it accepted, as Postmark's message search
 * does: `count` and `offset` required, newest first, `metadata_<key>=<value>` filters on one Metadata field.
 */

export interface PostmarkRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
}

export interface FakePostmark {
  url: string;
  token: string;
  requests: PostmarkRequest[];
  /** accepted `/email` bodies with the MessageID answered */
  sent: { body: any; messageId: string; at: string }[];
  /** the next `times` sends fail with this HTTP status and Postmark ErrorCode; `afterAccepting`: the message is taken all the same (a 5xx from a proxy after Postmark took it) */
  failSends(status: number, errorCode: number, message: string, times?: number, options?: { afterAccepting?: boolean }): void;
  /** the next `times` message searches fail with this HTTP status */
  failSearches(status: number, message: string, times?: number): void;
  /** milliseconds each send waits before answering */
  sendDelayMs: number;
  close(): Promise<void>;
}

export async function startFakePostmark(token = 'server-token-for-tests'): Promise<FakePostmark> {
  const requests: PostmarkRequest[] = [];
  const sent: FakePostmark['sent'] = [];
  const failures: { status: number; errorCode: number; message: string; afterAccepting?: boolean }[] = [];
  const searchFailures: { status: number; message: string }[] = [];
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify(body));
  };

  function search(params: URLSearchParams): [number, unknown] {
    const count = Number(params.get('count'));
    const offset = Number(params.get('offset'));
    if (!params.has('count') || !params.has('offset') || !(count >= 1 && count <= 500) || !(offset >= 0)) {
      return [422, { ErrorCode: 600, Message: 'Count and offset are required, count at most 500.' }];
    }
    const metadata = [...params].filter(([key]) => key.startsWith('metadata_'));
    if (metadata.length > 1) return [422, { ErrorCode: 601, Message: 'Only one metadata field can be searched at a time.' }];
    const matches = sent
      .filter(({ body }) => metadata.every(([key, value]) => body.Metadata?.[key.slice('metadata_'.length)] === value))
      .reverse();
    const summaries = matches.slice(offset, offset + count).map(({ body, messageId, at }) => ({
      MessageID: messageId,
      To: [{ Email: body.To, Name: null }],
      Cc: [],
      Bcc: [],
      Recipients: [body.To],
      ReceivedAt: at,
      From: body.From,
      Subject: body.Subject,
      Attachments: [],
      Status: 'Sent',
      TrackOpens: body.TrackOpens,
      TrackLinks: body.TrackLinks,
      Metadata: body.Metadata ?? {},
      MessageStream: body.MessageStream ?? 'outbound',
      Sandboxed: false,
    }));
    return [200, { TotalCount: matches.length, Messages: summaries }];
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const raw = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://localhost');
    let body: any;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      return json(res, 422, { ErrorCode: 402, Message: 'Received invalid JSON input.' });
    }
    requests.push({ method: req.method ?? '', path: url.pathname, headers: req.headers, body });
    if (req.headers['x-postmark-server-token'] !== token) {
      return json(res, 401, { ErrorCode: 10, Message: 'The Server Token you provided in the X-Postmark-Server-Token request header was invalid.' });
    }
    if (req.method === 'GET' && url.pathname === '/messages/outbound') {
      const failure = searchFailures.shift();
      if (failure) return json(res, failure.status, { ErrorCode: 0, Message: failure.message });
      return json(res, ...search(url.searchParams));
    }
    if (req.method !== 'POST' || url.pathname !== '/email') return json(res, 404, { ErrorCode: 404, Message: 'Not found' });
    if (fake.sendDelayMs) await new Promise((r) => setTimeout(r, fake.sendDelayMs));
    const failure = failures.shift();
    if (failure && !failure.afterAccepting) return json(res, failure.status, { ErrorCode: failure.errorCode, Message: failure.message });
    if (!body?.From || !body?.To) return json(res, 422, { ErrorCode: 300, Message: 'Invalid email request' });
    const messageId = randomUUID();
    const at = new Date().toISOString();
    sent.push({ body, messageId, at });
    if (failure) return json(res, failure.status, { ErrorCode: failure.errorCode, Message: failure.message });
    return json(res, 200, { To: body.To, SubmittedAt: at, MessageID: messageId, ErrorCode: 0, Message: 'OK' });
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      if (!res.headersSent) json(res, 500, { ErrorCode: 500, Message: String(err) });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const fake: FakePostmark = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    token,
    requests,
    sent,
    sendDelayMs: 0,
    failSends(status, errorCode, message, times = 1, options = {}) {
      for (let i = 0; i < times; i++) failures.push({ status, errorCode, message, ...options });
    },
    failSearches(status, message, times = 1) {
      for (let i = 0; i < times; i++) searchFailures.push({ status, message });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}

/** Environment for a service that talks to `fake`. */
export const postmarkEnv = (fake: FakePostmark): Record<string, string> => ({ POSTMARK_SERVER_TOKEN: fake.token, POSTMARK_API_URL: fake.url });
