import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { readBody } from './read-body.js';

/**
 * A local SES v2 endpoint speaking the REST-JSON wire protocol the AWS SDK uses: SigV4-signed JSON
 * requests, `{"MessageId"}` replies, and errors as AWS sends them (status, `x-amzn-ErrorType`, JSON
 * `{message}`), so the SDK raises its own typed exceptions. It records every request it received.
 */

export interface SesRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
}

export type SesStatus = 'PENDING' | 'SUCCESS' | 'FAILED' | 'TEMPORARY_FAILURE' | 'NOT_STARTED';

interface IdentityState {
  type: 'DOMAIN' | 'EMAIL_ADDRESS';
  dkim: SesStatus;
  mailFromDomain?: string;
  mailFrom: SesStatus;
  verifiedForSending: boolean;
}

/** Error codes with the HTTP status SES answers them with. */
const STATUS: Record<string, number> = {
  TooManyRequestsException: 429,
  LimitExceededException: 400,
  MessageRejected: 400,
  MailFromDomainNotVerifiedException: 400,
  SendingPausedException: 400,
  AccountSuspendedException: 400,
  AlreadyExistsException: 400,
  BadRequestException: 400,
  NotFoundException: 404,
  InternalFailure: 500,
};

export interface FakeSes {
  url: string;
  /** requests in arrival order */
  requests: SesRequest[];
  /** SendEmail bodies accepted, with the MessageId answered, and a raw message (`Content.Raw`) parsed as a mail client would */
  sent: { body: any; messageId: string; mime?: ParsedMail }[];
  /**
   * the next `times` SendEmail calls fail with this AWS error code; `afterAccepting`: each is taken
   * (recorded as sent, its Send event published) before the error is answered, as a 5xx can come
   */
  failSends(code: string, message: string, times?: number, options?: { afterAccepting?: boolean }): void;
  /** milliseconds each SendEmail waits before answering */
  sendDelayMs: number;
  /** called for each accepted SendEmail once it is answered, as configuration-set event publishing of Send events would be */
  onSend?: (sent: { body: any; messageId: string }) => void;
  /** sets what GetEmailIdentity reports for an identity (as DNS checks would) */
  setIdentity(identity: string, state: Partial<Pick<IdentityState, 'dkim' | 'mailFrom' | 'verifiedForSending'>>): void;
  close(): Promise<void>;
}

export async function startFakeSes(): Promise<FakeSes> {
  const requests: SesRequest[] = [];
  const sent: FakeSes['sent'] = [];
  const failures: { code: string; message: string; afterAccepting?: boolean }[] = [];
  const identities = new Map<string, IdentityState>();

  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-requestid': randomUUID(), ...headers });
    res.end(JSON.stringify(body));
  };
  const awsError = (res: ServerResponse, code: string, message: string) =>
    json(res, STATUS[code] ?? 400, { message }, { 'x-amzn-errortype': `${code}:http://internal.amazon.com/coral/com.amazonaws.sesv2/` });

  const identityView = (name: string, s: IdentityState) => ({
    IdentityType: s.type,
    FeedbackForwardingStatus: true,
    VerifiedForSendingStatus: s.verifiedForSending,
    VerificationStatus: s.verifiedForSending ? 'SUCCESS' : 'PENDING',
    DkimAttributes:
      s.type === 'DOMAIN'
        ? { SigningEnabled: true, Status: s.dkim, Tokens: ['tok1', 'tok2', 'tok3'].map((t) => `${t}${name.replace(/\W/g, '')}`), SigningAttributesOrigin: 'AWS_SES' }
        : undefined,
    MailFromAttributes: s.mailFromDomain ? { MailFromDomain: s.mailFromDomain, MailFromDomainStatus: s.mailFrom, BehaviorOnMxFailure: 'USE_DEFAULT_VALUE' } : undefined,
    Tags: [],
  });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const raw = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://localhost');
    const body = raw ? JSON.parse(raw) : undefined;
    requests.push({ method: req.method ?? '', path: url.pathname, headers: req.headers, body });

    // Every SDK request is SigV4-signed; an unsigned one is not from the SDK.
    if (!String(req.headers.authorization ?? '').startsWith('AWS4-HMAC-SHA256 Credential=')) {
      return awsError(res, 'BadRequestException', 'Missing Authentication Token');
    }
    const identityPath = url.pathname.match(/^\/v2\/email\/identities\/([^/]+)(\/mail-from)?$/);

    if (req.method === 'POST' && url.pathname === '/v2/email/outbound-emails') {
      const failure = failures.shift();
      if (fake.sendDelayMs) await new Promise((r) => setTimeout(r, fake.sendDelayMs));
      if (failure && !failure.afterAccepting) return awsError(res, failure.code, failure.message);
      const messageId = `0100018f-${randomUUID()}-000000`;
      // the SDK sends a blob as base64 in the JSON body
      const raw = body?.Content?.Raw?.Data;
      if (raw !== undefined && !(typeof raw === 'string' && raw.length > 0)) return awsError(res, 'BadRequestException', 'Raw.Data must be a non-empty blob');
      const mime = raw ? await simpleParser(Buffer.from(raw, 'base64'), { skipImageLinks: true }) : undefined;
      sent.push({ body, messageId, ...(mime ? { mime } : {}) });
      if (failure) awsError(res, failure.code, failure.message);
      else json(res, 200, { MessageId: messageId });
      // SES publishes the Send event after it has answered
      if (fake.onSend) setImmediate(() => fake.onSend?.({ body, messageId }));
      return;
    }
    if (req.method === 'POST' && url.pathname === '/v2/email/identities') {
      const name = String(body?.EmailIdentity ?? '');
      if (!name) return awsError(res, 'BadRequestException', 'EmailIdentity is required');
      if (identities.has(name)) return awsError(res, 'AlreadyExistsException', `Email identity ${name} already exists.`);
      const type = name.includes('@') ? 'EMAIL_ADDRESS' : 'DOMAIN';
      identities.set(name, { type, dkim: type === 'DOMAIN' ? 'PENDING' : 'NOT_STARTED', mailFrom: 'PENDING', verifiedForSending: false });
      const view = identityView(name, identities.get(name)!);
      return json(res, 200, { IdentityType: view.IdentityType, VerifiedForSendingStatus: false, DkimAttributes: view.DkimAttributes });
    }
    if (identityPath) {
      const name = decodeURIComponent(identityPath[1]);
      const state = identities.get(name);
      if (!state) return awsError(res, 'NotFoundException', `Email identity ${name} does not exist.`);
      if (req.method === 'GET' && !identityPath[2]) return json(res, 200, identityView(name, state));
      if (req.method === 'PUT' && identityPath[2]) {
        state.mailFromDomain = body?.MailFromDomain || undefined;
        state.mailFrom = 'PENDING';
        return json(res, 200, {});
      }
    }
    return awsError(res, 'BadRequestException', `no route for ${req.method} ${url.pathname} in the fake`);
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      if (!res.headersSent) awsError(res, 'InternalFailure', String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const fake: FakeSes = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    sent,
    sendDelayMs: 0,
    failSends(code, message, times = 1, options = {}) {
      for (let i = 0; i < times; i++) failures.push({ code, message, afterAccepting: options.afterAccepting });
    },
    setIdentity(identity, patch) {
      const state = identities.get(identity);
      if (!state) throw new Error(`fake SES: ${identity} was never created`);
      Object.assign(state, patch);
      if (state.type === 'DOMAIN' && patch.verifiedForSending === undefined) state.verifiedForSending = state.dkim === 'SUCCESS';
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}

/**
 * Environment for a service that talks to `fake`. The SDK reads credentials from the process
 * environment (its default chain), so they are set there; any value is accepted by the fake.
 */
export function sesEnv(fake: FakeSes): Record<string, string> {
  process.env.AWS_ACCESS_KEY_ID ??= 'test-access-key';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'test-secret-key';
  return { AWS_ENDPOINT_URL_SESV2: fake.url, AWS_REGION: 'us-east-1' };
}
