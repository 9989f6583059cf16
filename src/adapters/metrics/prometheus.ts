import { AggregatorRegistry, Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import type { Channel, Metrics, ProviderOutcome, WebhookOutcome } from '../../ports/metrics.js';

/** A gauge read at scrape time: `collect` sets its values (a bounded query, never a scan of the log). */
export interface ScrapedGauge {
  name: string;
  help: string;
  labelNames: string[];
  collect(set: (labels: Record<string, string>, value: number) => void): Promise<void>;
}

/** A registry's series as data, to be added to another thread's (`exposition`). */
export type MetricsSnapshot = MetricObjectWithValues<MetricValue<string>>[];

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The Prometheus registries of one thread. Series children are looked up once per label combination and
 * kept: the send path pays a map lookup and an observe, not a label object per request.
 */
export function createPrometheusMetrics() {
  const registry = new Registry();
  // Node's and the process's own series (heap, event loop, CPU) apart: summing two threads' CPU or start
  // time would be wrong, so another thread's exposition takes the service's series only.
  const runtime = new Registry();
  collectDefaultMetrics({ register: runtime, prefix: 'courier_' });

  const httpRequests = new Histogram({
    name: 'courier_http_request_duration_seconds',
    help: 'HTTP requests by method, route pattern and status, with their latency',
    labelNames: ['method', 'route', 'status'],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const accepted = new Counter({ name: 'courier_messages_accepted_total', help: 'Sends accepted (queued) by channel', labelNames: ['channel'], registers: [registry] });
  const refused = new Counter({
    name: 'courier_messages_refused_total',
    help: 'Sends refused by a send rule, by channel and reason',
    labelNames: ['channel', 'reason'],
    registers: [registry],
  });
  const providerCalls = new Histogram({
    name: 'courier_provider_call_duration_seconds',
    help: 'Provider calls by provider and outcome, with their latency',
    labelNames: ['provider', 'outcome'],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const webhookAttempts = new Counter({ name: 'courier_webhook_attempts_total', help: 'Webhook delivery attempts by outcome', labelNames: ['outcome'], registers: [registry] });

  const children = new Map<string, any>();
  function child<T>(key: string, make: () => T): T {
    let found = children.get(key);
    if (found === undefined) children.set(key, (found = make()));
    return found;
  }

  const metrics: Metrics = {
    messageAccepted: (channel: Channel) => child(`a|${channel}`, () => accepted.labels(channel)).inc(),
    messageRefused: (channel: Channel, reason: string) => child(`r|${channel}|${reason}`, () => refused.labels(channel, reason)).inc(),
    providerCall: (provider: string, outcome: ProviderOutcome, seconds: number) =>
      child(`p|${provider}|${outcome}`, () => providerCalls.labels(provider, outcome)).observe(seconds),
    webhookAttempt: (outcome: WebhookOutcome) => child(`w|${outcome}`, () => webhookAttempts.labels(outcome)).inc(),
  };

  return {
    metrics,
    /** one finished HTTP request; `route` is the route's pattern (`/api/messages/:id`), never the raw path */
    observeHttp(method: string, route: string, status: number, seconds: number) {
      child(`h|${method}|${route}|${status}`, () => httpRequests.labels(method, route, String(status))).observe(seconds);
    },
    /** Adds a gauge computed on each scrape (lag, queue depth). */
    addScrapedGauge(gauge: ScrapedGauge) {
      new Gauge({
        name: gauge.name,
        help: gauge.help,
        labelNames: gauge.labelNames,
        registers: [registry],
        async collect() {
          this.reset();
          await gauge.collect((labels, value) => this.set(labels, value));
        },
      });
    },
    /** The service's series, without the runtime's, for another thread's exposition. */
    async snapshot(): Promise<MetricsSnapshot> {
      return (await registry.getMetricsAsJSON()) as MetricsSnapshot;
    },
    /** The text exposition, with the service's series of the process's other threads (counters and histograms summed). */
    async exposition(others: MetricsSnapshot[] = []): Promise<{ contentType: string; body: string }> {
      const service = others.length === 0 ? registry : AggregatorRegistry.aggregate([await registry.getMetricsAsJSON(), ...others]);
      return { contentType: registry.contentType, body: `${await runtime.metrics()}\n${await service.metrics()}` };
    },
  };
}
export type PrometheusMetrics = ReturnType<typeof createPrometheusMetrics>;
