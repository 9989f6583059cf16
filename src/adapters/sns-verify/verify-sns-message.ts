import { X509Certificate, createVerify } from 'node:crypto';

export class SnsVerificationError extends Error {
  override name = 'SnsVerificationError';
}

const NOTIFICATION_KEYS = ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'];
const CONFIRMATION_KEYS = ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];
const TYPES = new Set(['Notification', 'SubscriptionConfirmation', 'UnsubscribeConfirmation']);
const MAX_CERT_BYTES = 64 * 1024;

/** PROVIDERS.md §1: `key\nvalue\n` for each present key, in the order the message type prescribes. */
export function buildSnsStringToSign(message: Record<string, unknown>): string {
  const keys = message.Type === 'Notification' ? NOTIFICATION_KEYS : CONFIRMATION_KEYS;
  return keys
    .filter((k) => message[k] !== undefined && message[k] !== null)
    .map((k) => `${k}\n${String(message[k])}\n`)
    .join('');
}

async function fetchText(url: string, timeoutMs: number): Promise<string> {
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'error' });
  if (!res.ok) throw new SnsVerificationError(`certificate fetch answered ${res.status}`);
  const text = await res.text();
  if (text.length > MAX_CERT_BYTES) throw new SnsVerificationError('certificate too large');
  return text;
}

/**
 * Verifies SNS HTTP messages: type, signature version 1 (SHA1withRSA) or 2 (SHA256withRSA), a signing
 * certificate URL matching `certUrlPattern` (the only gate; checked before anything is fetched), and
 * the RSA signature over the canonical string. Certificates are fetched with a timeout and cached by
 * URL, in-flight fetches shared.
 */
export function createSnsMessageVerifier(options: { certUrlPattern: RegExp; fetchTimeoutMs?: number; fetchCert?: (url: string) => Promise<string> }) {
  const timeoutMs = options.fetchTimeoutMs ?? 5000;
  const fetchCert = options.fetchCert ?? ((url: string) => fetchText(url, timeoutMs));
  const cache = new Map<string, Promise<X509Certificate>>();

  function certificate(url: string): Promise<X509Certificate> {
    if (!cache.has(url)) {
      const pending = fetchCert(url).then((pem) => new X509Certificate(pem));
      pending.catch(() => cache.delete(url));
      cache.set(url, pending);
    }
    return cache.get(url)!;
  }

  return {
    async verify(message: Record<string, unknown>): Promise<void> {
      if (!TYPES.has(String(message.Type))) throw new SnsVerificationError(`unknown message Type ${String(message.Type)}`);
      const version = String(message.SignatureVersion);
      if (version !== '1' && version !== '2') throw new SnsVerificationError(`unsupported SignatureVersion ${version}`);
      const certUrl = String(message.SigningCertURL ?? '');
      if (!options.certUrlPattern.test(certUrl)) throw new SnsVerificationError('SigningCertURL is not an allowed certificate location');
      if (typeof message.Signature !== 'string') throw new SnsVerificationError('missing Signature');
      let cert: X509Certificate;
      try {
        cert = await certificate(certUrl);
      } catch (err) {
        throw new SnsVerificationError(`cannot load the signing certificate: ${err instanceof Error ? err.message : String(err)}`);
      }
      const verifier = createVerify(version === '2' ? 'RSA-SHA256' : 'RSA-SHA1');
      verifier.update(buildSnsStringToSign(message), 'utf8');
      if (!verifier.verify(cert.publicKey, Buffer.from(message.Signature, 'base64'))) {
        throw new SnsVerificationError('signature does not match');
      }
    },

    /** Confirms a (verified) subscription by GETting its SubscribeURL, which must match the same pattern. */
    async confirmSubscription(message: Record<string, unknown>): Promise<void> {
      const url = String(message.SubscribeURL ?? '');
      if (!options.certUrlPattern.test(url)) throw new SnsVerificationError('SubscribeURL is not an allowed location');
      const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'error' });
      if (!res.ok) throw new SnsVerificationError(`subscription confirmation answered ${res.status}`);
    },
  };
}
