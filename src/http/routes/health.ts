import { z } from 'zod';
import type { Db } from '../../adapters/db/knex.js';
import type { EventStore } from '../../ports/event-store.js';
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
          await Promise.all([deps.db.raw('SELECT 1'), deps.eventStore.readStream('$healthcheck')]);
          return { status: 200, body: { status: 'ok' } };
        } catch {
          return { status: 503, body: { status: 'unavailable' } };
        }
      },
    }),
  ];
}
