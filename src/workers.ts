import type { Logger } from 'pino';
import type { Config } from './config/env.js';
import type { Infrastructure } from './infrastructure.js';
import { createSendMessageHandler } from './jobs/send-message.js';
import { createProcessManagerRunner } from './process-managers/runner.js';
import { SEND_JOB, sendMessagesManager } from './process-managers/send-messages.js';
import { startSideEffectSweeper } from './process-managers/side-effects.js';
import { createProjectionRunner } from './projections/runner.js';
import { projections } from './projections/registry.js';
import { createProviderRegistry } from './providers.js';

/**
 * The worker role: projections (read models), process managers (side effects decided from the log)
 * and the job handlers that perform them.
 */
export async function startWorkers(config: Config, infra: Infrastructure, logger: Logger) {
  const { db, eventStore, queue } = infra;
  const providers = createProviderRegistry({ db, config });

  const projectionRunner = createProjectionRunner({ db, eventStore, projections, logger });
  await projectionRunner.start();

  await queue.work(SEND_JOB, createSendMessageHandler({ db, eventStore, queue, ...providers, logger }) as never, { concurrency: 16 });

  const managers = createProcessManagerRunner({ db, eventStore, queue, managers: [sendMessagesManager], logger });
  managers.start();
  const sweeper = startSideEffectSweeper({ db, queue, onError: (err) => logger.warn({ err }, 'side-effect sweep failed') });

  return {
    async stop() {
      sweeper.stop();
      await managers.stop();
      await projectionRunner.stop();
    },
  };
}
