import { createHash, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { unauthorized } from '../../domain/errors.js';
import { defineRoute } from '../route.js';

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

const EXAMPLE = `# HELP courier_messages_accepted_total Sends accepted (queued) by channel
# TYPE courier_messages_accepted_total counter
courier_messages_accepted_total{channel="email"} 1042
# HELP courier_messages_refused_total Sends refused by a send rule, by channel and reason
# TYPE courier_messages_refused_total counter
courier_messages_refused_total{channel="email",reason="suppressed"} 3
`;

/** GET /metrics: the Prometheus text exposition; with METRICS_TOKEN set, only for a bearer of it. */
export function createMetricsRoutes(deps: { exposition(): Promise<{ contentType: string; body: string }>; token?: string }) {
  const expected = deps.token === undefined ? undefined : digest(deps.token);
  return [
    defineRoute({
      method: 'get',
      path: '/metrics',
      summary: 'Prometheus metrics: HTTP, sends accepted and refused, provider calls, webhook attempts, read-model and process-manager lag, queue depth',
      tag: 'system',
      auth: { kind: 'public' },
      ownCredentials: 'metricsToken',
      responses: {
        200: { description: 'Prometheus text exposition format 0.0.4', schema: z.string().meta({ examples: [EXAMPLE] }), contentType: 'text/plain; version=0.0.4' },
        401: { description: 'METRICS_TOKEN is set and the request does not carry it as `Authorization: Bearer <token>`' },
      },
      async handler({ req, res }) {
        if (expected) {
          const header = req.headers.authorization ?? '';
          // the scheme's name is case-insensitive (RFC 9110)
          const presented = /^bearer /i.test(header) ? header.slice('bearer '.length) : '';
          // compared as digests: equal lengths, and no early exit that would time the token out
          if (!timingSafeEqual(digest(presented), expected)) throw unauthorized('a valid metrics token is required');
        }
        const { contentType, body } = await deps.exposition();
        res.status(200).type(contentType).send(body);
        return undefined;
      },
    }),
  ];
}
