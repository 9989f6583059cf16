/**
 * What the service counts for its operators (GET /metrics). Commands and jobs report through this
 * port; the Prometheus adapter (src/adapters/metrics/prometheus.ts) keeps the series.
 */
export type Channel = 'email' | 'sms';
export type ProviderOutcome = 'accepted' | 'failed' | 'retry';
export type WebhookOutcome = 'delivered' | 'retry' | 'failed';

export interface Metrics {
  messageAccepted(channel: Channel): void;
  /** `reason`: a send rule's code (suppressed, unverified_sender, ...), never free text */
  messageRefused(channel: Channel, reason: string): void;
  providerCall(provider: string, outcome: ProviderOutcome, seconds: number): void;
  webhookAttempt(outcome: WebhookOutcome): void;
}

export const NO_METRICS: Metrics = {
  messageAccepted() {},
  messageRefused() {},
  providerCall() {},
  webhookAttempt() {},
};
