import { z } from 'zod';
import type { Db } from '../../adapters/db/knex.js';
import type { EventStore } from '../../ports/event-store.js';
import { within, type Readiness } from '../../observability.js';
import { defineRoute } from '../route.js';

const healthBody = z.object({ status: z.enum(['ok', 'unavailable']) });

export function createHealthRoutes(deps: { db: Db; eventStore: EventStore }) {
  return [
    defineRoute({
      method: 'get',
      path: '/healthz',
      summary: 'Liveness and store reachability',
      tag: 'system',
      auth: { kind: 'public' },
      responses: {
        200: { description: 'The server accepts requests and its stores are reachable', schema: healthBody },
        503: { description: 'A store is unreachable', schema: healthBody },
      },
      async handler() {
        try {
          await within(Promise.all([deps.db.raw('SELECT 1'), deps.eventStore.readStream('$healthcheck')]));
          return { status: 200, body: { status: 'ok' } };
        } catch {
          return { status: 503, body: { status: 'unavailable' } };
        }
      },
    }),
  ];
}

const readinessBody = z.object({
  status: z.enum(['ready', 'unready']),
  checks: z.record(z.string(), z.object({ ok: z.boolean(), detail: z.string().optional() })),
});

/** GET /readyz: whether this process can do its roles' work now (a load balancer's or orchestrator's readiness probe). */
export function createReadinessRoutes(deps: { readiness(): Promise<Readiness> }) {
  return [
    defineRoute({
      method: 'get',
      path: '/readyz',
      summary: "Readiness: the database, event store and queue answer, and the read models this process serves or builds are current",
      tag: 'system',
      auth: { kind: 'public' },
      responses: {
        200: {
          description: 'Ready',
          schema: readinessBody.meta({
            examples: [{ status: 'ready', checks: { database: { ok: true }, eventStore: { ok: true }, queue: { ok: true }, readModels: { ok: true } } }],
          }),
        },
        503: {
          description: 'Not ready: each failing check says why',
          schema: readinessBody.meta({
            examples: [{ status: 'unready', checks: { database: { ok: false, detail: 'connect ECONNREFUSED 127.0.0.1:5432' }, eventStore: { ok: true } } }],
          }),
        },
      },
      async handler() {
        const { ready, checks } = await deps.readiness();
        return { status: ready ? 200 : 503, body: { status: ready ? 'ready' : 'unready', checks } };
      },
    }),
  ];
}
