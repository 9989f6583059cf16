import { createSign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/sns/${name}`, import.meta.url), 'utf8');

/** Test-only key pair standing in for SNS's: messages signed with the key verify against the certificate. */
export const SNS_TEST_KEY_PEM = fixture('signing-key.pem');
export const SNS_TEST_CERT_PEM = fixture('signing-cert.pem');
/** An unrelated key pair, for "signed with the wrong key" cases. */
export const OTHER_TEST_KEY_PEM = fixture('other-key.pem');
export const OTHER_TEST_CERT_PEM = fixture('other-cert.pem');

/**
 * The string SNS signs, written out here from AWS's documentation on its own (not imported from src), so a
 * mistake in the service's version cannot be mirrored by the messages its tests sign.
 */
function stringToSign(message: Record<string, unknown>): string {
  const keys =
    message.Type === 'Notification'
      ? ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type']
      : ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];
  return keys
    .filter((key) => message[key] !== undefined)
    .map((key) => `${key}\n${String(message[key])}\n`)
    .join('');
}

/**
 * Signs an SNS HTTP message the way SNS does: sets SignatureVersion, SigningCertURL and Signature
 * (SHA1withRSA for version 1, SHA256withRSA for version 2) and returns the message with them.
 * `privateKeyPem` defaults to the test key whose certificate startSnsCertServer() serves.
 */
export function signSnsMessage<T extends Record<string, unknown>>(
  message: T,
  options: { version: '1' | '2'; certUrl: string; privateKeyPem?: string },
): T & { SignatureVersion: string; SigningCertURL: string; Signature: string } {
  const signer = createSign(options.version === '2' ? 'RSA-SHA256' : 'RSA-SHA1');
  signer.update(stringToSign(message), 'utf8');
  const Signature = signer.sign(options.privateKeyPem ?? SNS_TEST_KEY_PEM, 'base64');
  return { ...message, SignatureVersion: options.version, SigningCertURL: options.certUrl, Signature };
}

/** The topic test notifications come from unless told otherwise: the one tests list in SNS_TOPIC_ARNS. */
export const SNS_TEST_TOPIC_ARN = 'arn:aws:sns:us-east-1:123456789012:ses-events';

/** A Notification carrying `payload` (an SES event, say) as its JSON Message, signed. */
export function signedSnsNotification(
  payload: unknown,
  options: { certUrl: string; version?: '1' | '2'; messageId?: string; topicArn?: string; subject?: string; timestamp?: string },
) {
  const message: Record<string, unknown> = {
    Type: 'Notification',
    MessageId: options.messageId ?? crypto.randomUUID(),
    TopicArn: options.topicArn ?? SNS_TEST_TOPIC_ARN,
    Message: typeof payload === 'string' ? payload : JSON.stringify(payload),
    Timestamp: options.timestamp ?? new Date().toISOString(),
    UnsubscribeURL: 'https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=arn:aws:sns:us-east-1:123456789012:ses-events:0b2d',
  };
  if (options.subject !== undefined) message.Subject = options.subject;
  return signSnsMessage(message, { version: options.version ?? '2', certUrl: options.certUrl });
}

export interface SnsCertServer {
  /** `http://127.0.0.1:<port>` */
  baseUrl: string;
  /** serves SNS_TEST_CERT_PEM */
  certUrl: string;
  /** serves OTHER_TEST_CERT_PEM */
  otherCertUrl: string;
  /** a SubscribeURL that answers 200 with a ConfirmSubscriptionResponse */
  subscribeUrl: string;
  /** matches every URL of this server, and nothing else: use as SNS_CERT_URL_PATTERN */
  pattern: RegExp;
  /** every request's path, in arrival order */
  requests: string[];
  close(): Promise<void>;
}

/**
 * Plays the SNS endpoints a verifier talks to, on 127.0.0.1 over plain http: certificates, the
 * SubscribeURL, and misbehaving variants (`/hang.pem` never answers, `/huge.pem` is 1 MB,
 * `/redirect.pem` redirects to the real certificate, `/missing.pem` is 404, `/fail-confirm` is 500).
 */
export async function startSnsCertServer(): Promise<SnsCertServer> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    requests.push(path);
    const pathname = path.split('?')[0];
    if (pathname === '/SimpleNotificationService-test.pem') return void res.end(SNS_TEST_CERT_PEM);
    if (pathname === '/other.pem') return void res.end(OTHER_TEST_CERT_PEM);
    if (pathname === '/hang.pem') return; // never answers
    if (pathname === '/huge.pem') return void res.end(`${SNS_TEST_CERT_PEM}${'x'.repeat(1024 * 1024)}`);
    if (pathname === '/redirect.pem') return void res.writeHead(302, { location: '/SimpleNotificationService-test.pem' }).end();
    if (pathname === '/confirm') {
      res.writeHead(200, { 'content-type': 'text/xml' });
      return void res.end('<ConfirmSubscriptionResponse><ConfirmSubscriptionResult><SubscriptionArn>arn:aws:sns:us-east-1:123456789012:ses-events:0b2d</SubscriptionArn></ConfirmSubscriptionResult></ConfirmSubscriptionResponse>');
    }
    if (pathname === '/fail-confirm') return void res.writeHead(500).end('<Error/>');
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    baseUrl,
    certUrl: `${baseUrl}/SimpleNotificationService-test.pem`,
    otherCertUrl: `${baseUrl}/other.pem`,
    subscribeUrl: `${baseUrl}/confirm?Action=ConfirmSubscription&Token=2336412f37fb`,
    pattern: new RegExp(`^http://127\\.0\\.0\\.1:${port}/`),
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
