import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from './read-body.js';

/**
 * A local server that speaks the SNS query protocol the way `@aws-sdk/client-sns` uses it: a
 * form-encoded POST `Action=…&Version=2010-03-31&…`, answered in XML (`<ActionResponse><ActionResult>`)
 * or with an AWS XML error (`<ErrorResponse><Error><Type/><Code/><Message/>`). It covers Publish to a
 * phone number, ListPhoneNumbersOptedOut (paged by an opaque nextToken) and CheckIfPhoneNumberIsOptedOut.
 * Point the service at it with `AWS_ENDPOINT_URL_SNS`.
 */
const NS = 'http://sns.amazonaws.com/doc/2010-03-31/';
const E164 = /^\+[1-9]\d{6,14}$/;

export interface PublishedSms {
  messageId: string;
  phoneNumber: string;
  message: string;
  /** MessageAttributes by name: {dataType, stringValue} */
  attributes: Record<string, { dataType: string; stringValue: string }>;
}

export interface SnsFault {
  status: number;
  code: string;
  message?: string;
  type?: 'Sender' | 'Receiver';
}

export interface FakeSns {
  url: string;
  published: PublishedSms[];
  optedOut: string[];
  /** requests per Action */
  calls: Record<string, number>;
  /** most requests of one Action in progress at the same time */
  maxInFlight: Record<string, number>;
  pageSize: number;
  /** added to every answer, so that overlapping callers really overlap */
  latencyMs: number;
  /** the next Publish requests answer these errors, in order */
  failPublish(...faults: SnsFault[]): void;
  /** the next requests of `action` answer these errors, in order */
  failNext(action: string, ...faults: SnsFault[]): void;
  /** requests of `action` wait until the returned function is called */
  hold(action: string): () => void;
  close(): Promise<void>;
}

const escapeXml = (s: string) => s.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!);

function ok(res: ServerResponse, action: string, result: string) {
  res.writeHead(200, { 'content-type': 'text/xml' });
  res.end(
    `<${action}Response xmlns="${NS}"><${action}Result>${result}</${action}Result>` +
      `<ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata></${action}Response>`,
  );
}

function fail(res: ServerResponse, f: SnsFault) {
  res.writeHead(f.status, { 'content-type': 'text/xml' });
  res.end(
    `<ErrorResponse xmlns="${NS}"><Error><Type>${f.type ?? (f.status >= 500 ? 'Receiver' : 'Sender')}</Type>` +
      `<Code>${f.code}</Code><Message>${escapeXml(f.message ?? f.code)}</Message></Error>` +
      `<RequestId>${randomUUID()}</RequestId></ErrorResponse>`,
  );
}

/** `MessageAttributes.entry.N.Name` / `.Value.DataType` / `.Value.StringValue` → a record. */
function messageAttributes(form: URLSearchParams) {
  const out: PublishedSms['attributes'] = {};
  for (let n = 1; form.has(`MessageAttributes.entry.${n}.Name`); n++) {
    out[form.get(`MessageAttributes.entry.${n}.Name`)!] = {
      dataType: form.get(`MessageAttributes.entry.${n}.Value.DataType`) ?? '',
      stringValue: form.get(`MessageAttributes.entry.${n}.Value.StringValue`) ?? '',
    };
  }
  return out;
}

export async function startFakeSns(options: { optedOut?: string[]; pageSize?: number; latencyMs?: number } = {}): Promise<FakeSns> {
  const faults = new Map<string, SnsFault[]>();
  const failNext = (action: string, ...f: SnsFault[]) => void faults.set(action, [...(faults.get(action) ?? []), ...f]);
  const holds = new Map<string, { gate: Promise<void>; release: () => void }>();
  const inFlight: Record<string, number> = {};

  const fake: Omit<FakeSns, 'url' | 'close'> = {
    published: [],
    optedOut: [...(options.optedOut ?? [])],
    calls: {},
    maxInFlight: {},
    pageSize: options.pageSize ?? 100,
    latencyMs: options.latencyMs ?? 0,
    failPublish: (...f) => failNext('Publish', ...f),
    failNext,
    hold(action) {
      let open!: () => void;
      const gate = new Promise<void>((r) => (open = r));
      const release = () => {
        if (holds.get(action)?.gate === gate) holds.delete(action);
        open();
      };
      holds.set(action, { gate, release });
      return release;
    },
  };

  async function handle(req: IncomingMessage, res: ServerResponse) {
    if (req.method !== 'POST') return fail(res, { status: 405, code: 'MethodNotAllowed' });
    if (!String(req.headers.authorization ?? '').startsWith('AWS4-HMAC-SHA256 Credential=')) {
      return fail(res, { status: 403, code: 'MissingAuthenticationToken', message: 'Request is missing Authentication Token' });
    }
    if (!String(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
      return fail(res, { status: 400, code: 'MalformedQueryString' });
    }
    const form = new URLSearchParams(await readBody(req));
    const action = form.get('Action') ?? '';
    if (form.get('Version') !== '2010-03-31') return fail(res, { status: 400, code: 'InvalidParameterValue', message: 'Version' });
    fake.calls[action] = (fake.calls[action] ?? 0) + 1;
    inFlight[action] = (inFlight[action] ?? 0) + 1;
    fake.maxInFlight[action] = Math.max(fake.maxInFlight[action] ?? 0, inFlight[action]);
    try {
      await holds.get(action)?.gate;
      if (fake.latencyMs) await new Promise((r) => setTimeout(r, fake.latencyMs));
      const fault = faults.get(action)?.shift();
      if (fault) return fail(res, fault);
      switch (action) {
        case 'Publish':
          return publish(form, res);
        case 'ListPhoneNumbersOptedOut':
          return listOptedOut(form, res);
        case 'CheckIfPhoneNumberIsOptedOut': {
          const phone = form.get('phoneNumber') ?? '';
          if (!E164.test(phone)) return fail(res, { status: 400, code: 'InvalidParameter', message: 'Invalid parameter: phoneNumber' });
          return ok(res, action, `<isOptedOut>${fake.optedOut.includes(phone)}</isOptedOut>`);
        }
        default:
          return fail(res, { status: 400, code: 'InvalidAction', message: `Could not find operation ${action}` });
      }
    } finally {
      inFlight[action]--;
    }
  }

  function publish(form: URLSearchParams, res: ServerResponse) {
    const phoneNumber = form.get('PhoneNumber') ?? '';
    const message = form.get('Message') ?? '';
    if (!E164.test(phoneNumber)) return fail(res, { status: 400, code: 'InvalidParameter', message: 'Invalid parameter: PhoneNumber Reason: not E.164' });
    if (!message) return fail(res, { status: 400, code: 'InvalidParameter', message: 'Invalid parameter: Empty message' });
    const messageId = randomUUID();
    fake.published.push({ messageId, phoneNumber, message, attributes: messageAttributes(form) });
    return ok(res, 'Publish', `<MessageId>${messageId}</MessageId>`);
  }

  function listOptedOut(form: URLSearchParams, res: ServerResponse) {
    const token = form.get('nextToken');
    let start = 0;
    if (token) {
      const decoded = /^page:(\d+)$/.exec(Buffer.from(token, 'base64').toString('utf8'));
      if (!decoded) return fail(res, { status: 400, code: 'InvalidParameter', message: 'Invalid parameter: nextToken' });
      start = Number(decoded[1]);
    }
    const page = fake.optedOut.slice(start, start + fake.pageSize);
    const end = start + page.length;
    const next = end < fake.optedOut.length ? `<nextToken>${Buffer.from(`page:${end}`).toString('base64')}</nextToken>` : '';
    return ok(res, 'ListPhoneNumbersOptedOut', `<phoneNumbers>${page.map((p) => `<member>${escapeXml(p)}</member>`).join('')}</phoneNumbers>${next}`);
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err) => fail(res, { status: 500, code: 'InternalError', message: String(err) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(fake, {
    url,
    async close() {
      for (const { release } of [...holds.values()]) release(); // let held requests finish
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}

/** Credentials the SDK signs with; the fake only checks that a SigV4 signature is present. */
export const FAKE_AWS_CREDENTIALS = { accessKeyId: 'AKIDTEST', secretAccessKey: 'test-secret' };
