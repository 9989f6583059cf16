import { ProviderError } from '../../ports/email-provider.js';

/**
 * SNS error names (the SDK's, from the query protocol's `<Code>`) worth another attempt. Throttling
 * answers 429 and must be retried; `InvalidParameter` (a bad number), `AuthorizationError`, `OptedOut`
 * and the other 4xx are final.
 */
const RETRYABLE = new Set([
  'ThrottledException',
  'Throttling',
  'KMSThrottlingException',
  'InternalErrorException',
  'InternalFailure',
  'ServiceUnavailable',
  'RequestTimeout',
  'TimeoutError',
]);

export function snsProviderError(err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  const e = err as { name?: string; message?: string; $metadata?: { httpStatusCode?: number }; $fault?: string };
  const status = e.$metadata?.httpStatusCode;
  // No HTTP status: the request never got an answer (connection refused, reset, timed out).
  const retryable = RETRYABLE.has(e.name ?? '') || e.$fault === 'server' || status === undefined || status === 429 || status >= 500;
  return new ProviderError(`${e.name ?? 'Error'}: ${e.message ?? String(err)}`, retryable, e.name);
}
