import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { createApplication, type Application } from './application.js';
import { loadConfig } from './config/env.js';
import { createLogger } from './logger.js';
import type { ThreadRequest, ThreadReply } from './workers-thread.js';

const WORKERS_NICE = 10;

/**
 * The `all` role's workers thread: the worker role (read models, process managers, jobs) on the
 * database the API's thread opened, answering that thread's requests for its metrics, its readiness,
 * and to stop.
 */
const port = parentPort!;
// Below the API's thread for the scheduler (Linux gives each thread a nice value of its own): a burst
// of requests has the cores first and the workers catch up after it, as they did on one event loop,
// and an idle API leaves them all the time they need. At the API's priority the workers took a
// burst's cores, and the send bench accepted fewer sends than with one thread for both.
if (process.platform === 'linux') setPriority(WORKERS_NICE);
const config = loadConfig(workerData.env as NodeJS.ProcessEnv);
const logger = createLogger(config.LOG_LEVEL);

let application: Application;
try {
  application = await createApplication('worker', { config, logger });
} catch (err) {
  port.postMessage({ kind: 'failed', message: err instanceof Error ? err.message : String(err) } satisfies ThreadReply);
  throw err;
}
port.postMessage({ kind: 'started' } satisfies ThreadReply);

port.on('message', async (request: ThreadRequest) => {
  const { observability } = application.shared;
  try {
    const value =
      request.kind === 'snapshot' ? await observability.prometheus.snapshot()
      : request.kind === 'readiness' ? await observability.readiness()
      : await application.stop();
    port.postMessage({ kind: 'answer', id: request.id, value } satisfies ThreadReply);
    if (request.kind === 'stop') port.close();
  } catch (err) {
    port.postMessage({ kind: 'answer', id: request.id, error: err instanceof Error ? err.message : String(err) } satisfies ThreadReply);
  }
});
