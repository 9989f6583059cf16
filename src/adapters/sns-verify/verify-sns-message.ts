import { X509Certificate, verify as verifySignature, type KeyObject } from 'node:crypto';
import { confirmSubscription } from './confirm-subscription.js';
import { fetchBounded } from './fetch-bounded.js';
import { allowedSnsUrl } from './sns-url-pattern.js';
import { SnsVerificationError } from './sns-verification-error.js';

export { SnsVerificationError } from './sns-verification-error.js';

const MESSAGE_TYPES = new Set(['Notification', 'SubscriptionConfirmation', 'UnsubscribeConfirmation']);
const HASH_BY_VERSION: Record<string, 'sha1' | 'sha256'> = { '1': 'sha1', '2': 'sha256' };
const NOTIFICATION_KEYS = ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'];
const CONFIRMATION_KEYS = ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];
/** Subject is the one key a message may leave out (AWS's SNS signature verification); every other signed key must be there. */
const OPTIONAL_KEYS = new Set(['Subject']);

const DEFAULT_FETCH_TIMEOUT_MS = 5_000;
/** An SNS signing certificate is about 2 KB of PEM; anything far larger is not one. */
const MAX_CERT_BYTES = 32 * 1024;
/** SNS uses a handful of certificates; the bound only matters against a pattern wider than production's. */
const MAX_CACHED_CERTS = 64;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * As AWS specifies SNS signatures: `key\nvalue\n` for each present key, in the order the message Type prescribes.
 * Throws SnsVerificationError when a signed key is missing or not a string.
 */
export function buildSnsStringToSign(message: Record<string, unknown>): string {
  const type = message.Type;
  if (typeof type !== 'string' || !MESSAGE_TYPES.has(type)) throw new SnsVerificationError(`unknown message Type ${String(type)}`);
  const keys = type === 'Notification' ? NOTIFICATION_KEYS : CONFIRMATION_KEYS;
  let text = '';
  for (const key of keys) {
    const value = message[key];
    if ((value === undefined || value === null) && OPTIONAL_KEYS.has(key)) continue;
    if (typeof value !== 'string') throw new SnsVerificationError(`${key} is missing or not a string`);
    text += `${key}\n${value}\n`;
  }
  return text;
}

export interface SnsMessageVerifierOptions {
  /** SNS_CERT_URL_PATTERN: which SigningCertURLs (and SubscribeURLs) may be fetched, whole URL. */
  certUrlPattern: RegExp;
  /** whole fetch of one certificate (and of a SubscribeURL); default 5 s */
  fetchTimeoutMs?: number;
  /** replaces the http(s) fetch of a certificate's PEM; the URL has passed the pattern already */
  fetchCert?: (url: string) => Promise<string>;
}

/**
 * Verifies SNS HTTP messages before anything in them is trusted. Everything that can be checked
 * without the network is checked first, so a message failing those never makes us fetch. Certificates
 * are cached by URL, in-flight fetches shared (a burst of notifications fetches once); a failed fetch
 * is forgotten so the next message tries again.
 */
export function createSnsMessageVerifier(options: SnsMessageVerifierOptions) {
  const timeoutMs = options.fetchTimeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS;
  const fetchPem = options.fetchCert ?? ((url: string) => fetchCertificatePem(new URL(url), timeoutMs));
  const keys = new Map<string, Promise<KeyObject>>();

  function publicKeyAt(url: string): Promise<KeyObject> {
    const cached = keys.get(url);
    if (cached) return cached;
    const pending = fetchPem(url).then((pem) => new X509Certificate(pem).publicKey);
    pending.catch(() => {
      if (keys.get(url) === pending) keys.delete(url);
    });
    if (keys.size >= MAX_CACHED_CERTS) keys.delete(keys.keys().next().value!);
    keys.set(url, pending);
    return pending;
  }

  return {
    async verify(message: Record<string, unknown>): Promise<void> {
      if (!message || typeof message !== 'object') throw new SnsVerificationError('not an SNS message');
      const stringToSign = buildSnsStringToSign(message);
      const hash = HASH_BY_VERSION[String(message.SignatureVersion)];
      if (!hash || typeof message.SignatureVersion !== 'string') {
        throw new SnsVerificationError(`unsupported SignatureVersion ${String(message.SignatureVersion)}`);
      }
      if (typeof message.Signature !== 'string' || !BASE64.test(message.Signature)) {
        throw new SnsVerificationError('Signature is missing or not base64');
      }
      const certUrl = allowedSnsUrl(options.certUrlPattern, message.SigningCertURL);
      if (!certUrl) throw new SnsVerificationError('SigningCertURL is not an allowed certificate location');

      let key: KeyObject;
      try {
        key = await publicKeyAt(certUrl.href);
      } catch (err) {
        throw new SnsVerificationError(`cannot load the signing certificate: ${err instanceof Error ? err.message : String(err)}`);
      }
      let valid = false;
      try {
        valid = verifySignature(hash, Buffer.from(stringToSign, 'utf8'), key, Buffer.from(message.Signature, 'base64'));
      } catch {
        // a key the algorithm cannot use (say, not RSA) verifies nothing
      }
      if (!valid) throw new SnsVerificationError('signature does not match');
    },

    /** GETs the SubscribeURL of a verified SubscriptionConfirmation; see confirmSubscription. */
    confirmSubscription(message: Record<string, unknown>): Promise<void> {
      return confirmSubscription(message, { certUrlPattern: options.certUrlPattern, timeoutMs });
    },
  };
}
export type SnsMessageVerifier = ReturnType<typeof createSnsMessageVerifier>;

async function fetchCertificatePem(url: URL, timeoutMs: number): Promise<string> {
  const res = await fetchBounded(url, { timeoutMs, maxBytes: MAX_CERT_BYTES });
  if (res.status !== 200) throw new Error(`certificate server answered ${res.status}`);
  return res.body.toString('utf8');
}
