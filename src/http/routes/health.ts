import { z } from 'zod';
import type { Db } from '../../adapters/db/knex.js';
import type { EventStore } from '../../ports/event-store.js';
import { defineRoute } from '../route.js';

const healthBody = z.object({ status: z.enum(['ok', 'unavailable']) });

// A store that accepts connections but never answers would otherwise hold the probe open forever
// (the event store's pg pool has no connect timeout; knex gives up only after 30 s).
const STORE_CHECK_TIMEOUT_MS = 3_000;

function within<T>(check: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`store check timed out after ${ms} ms`)), ms);
  });
  return Promise.race([check, timeout]).finally(() => clearTimeout(timer));
}

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
          await within(Promise.all([deps.db.raw('SELECT 1'), deps.eventStore.readStream('$healthcheck')]), STORE_CHECK_TIMEOUT_MS);
          return { status: 200, body: { status: 'ok' } };
        } catch {
          return { status: 503, body: { status: 'unavailable' } };
        }
      },
    }),
  ];
}
