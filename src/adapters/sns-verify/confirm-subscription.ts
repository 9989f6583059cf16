import { fetchBounded } from './fetch-bounded.js';
import { allowedSnsUrl } from './sns-url-pattern.js';
import { SnsConfirmationError, SnsVerificationError } from './sns-verification-error.js';

const DEFAULT_TIMEOUT_MS = 5_000;
/** SNS answers a confirmation with a short XML document; we only need its status. */
const MAX_RESPONSE_BYTES = 16 * 1024;

/**
 * Confirms an SNS subscription by GETting its SubscribeURL. Call it only with a message that
 * verify() accepted: the signature covers SubscribeURL, and the URL must also match the same pattern
 * as certificates (SNS_CERT_URL_PATTERN), so a message can never make us GET an arbitrary address.
 * Throws SnsVerificationError when refused, SnsConfirmationError when SNS did not confirm.
 */
export async function confirmSubscription(
  message: Record<string, unknown>,
  options: { certUrlPattern: RegExp; timeoutMs?: number },
): Promise<void> {
  if (message.Type !== 'SubscriptionConfirmation') throw new SnsVerificationError('not a SubscriptionConfirmation');
  const url = allowedSnsUrl(options.certUrlPattern, message.SubscribeURL);
  if (!url) throw new SnsVerificationError('SubscribeURL is not an allowed location');
  let status: number;
  try {
    ({ status } = await fetchBounded(url, { timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS, maxBytes: MAX_RESPONSE_BYTES }));
  } catch (err) {
    throw new SnsConfirmationError(`subscription confirmation failed: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (status < 200 || status >= 300) throw new SnsConfirmationError(`subscription confirmation answered ${status}`);
}
