import type { Logger } from 'pino';

/** How soon after a start the long-period tasks run first. */
const FIRST_RUN_AFTER_MS = 60_000;

/**
 * Runs `task` every `ms`, one run at a time, logging failures; a task of a long period also runs a
 * minute after the start (`soonAfterStart`), as a worker restarted more often than its period (a deploy
 * a day, a crash loop) would otherwise never run it. Stopping waits for a run in progress.
 */
export function every(ms: number, task: () => Promise<unknown>, logger: Logger, name: string, options: { soonAfterStart?: boolean } = {}) {
  let running: Promise<void> | null = null;
  const run = () => {
    if (running) return;
    running = task()
      .then(() => undefined, (err) => logger.warn({ err, task: name }, 'periodic task failed'))
      .finally(() => (running = null));
  };
  const timer = setInterval(run, ms);
  timer.unref();
  const first = options.soonAfterStart ? setTimeout(run, Math.min(FIRST_RUN_AFTER_MS, ms)) : undefined;
  first?.unref();
  // A run cut off by closing the database (or by the read models it waits for stopping) would hang the shutdown.
  return async () => {
    clearInterval(timer);
    clearTimeout(first);
    await running;
  };
}
