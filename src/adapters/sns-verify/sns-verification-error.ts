/** An SNS message (or its SubscribeURL) that must not be trusted; the reason is safe to log. */
export class SnsVerificationError extends Error {
  override name = 'SnsVerificationError';
}

/** A verified SubscriptionConfirmation whose SubscribeURL could not be confirmed (network, non-2xx). */
export class SnsConfirmationError extends Error {
  override name = 'SnsConfirmationError';
}
