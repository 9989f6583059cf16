import type { Logger } from 'pino';
import type { Config } from './config/env.js';
import type { Infrastructure } from './infrastructure.js';
import { createProjectionRunner } from './projections/runner.js';
import { projections } from './projections/registry.js';

/** The worker role: projections (read models) and, later, process managers and job handlers. */
export async function startWorkers(_config: Config, infra: Infrastructure, logger: Logger) {
  const runner = createProjectionRunner({ db: infra.db, eventStore: infra.eventStore, projections, logger });
  await runner.start();
  return {
    async stop() {
      await runner.stop();
    },
  };
}
