import type PgBoss from 'pg-boss';
import type { JobHandler } from '../../ports/job-queue.js';
import { createGroupCommit } from '../../group-commit.js';
import { createWakeSignal } from './wake-signal.js';
import { persistently } from '../../persistently.js';

export interface PgBossDispatcher {
  /** a job may be waiting: fetch now rather than at the next poll */
  notify(): void;
  /** stops fetching, then waits for the running handlers and their completion records */
  stop(): Promise<void>;
}

/**
 * One fetch loop per `work()` call, keeping up to `concurrency` handlers running. pg-boss's own
 * `work()` is not used: concurrency there means N workers each polling (N queries per interval),
 * its stop() gives up on running handlers after a timeout and marks them failed, and it records
 * completion without awaiting it, so nothing can wait for that record before the pool closes.
 * Here one query fetches up to the free slots, completion is awaited (recorded in batches), and
 * `stop()` waits for both.
 */
export function startPgBossDispatcher<T>(deps: {
  boss: PgBoss;
  name: string;
  /** a fetch filled every free slot: more jobs are probably waiting */
  onBacklog(): void;
  handler: JobHandler<T>;
  concurrency: number;
  pollingIntervalMs: number;
  onError: (err: unknown) => void;
}): PgBossDispatcher {
  const { boss, name, handler, concurrency, pollingIntervalMs, onError } = deps;
  const running = new Set<Promise<void>>();
  const wake = createWakeSignal();
  // Jobs finishing together are recorded complete in one statement, not one round trip each.
  const completions = createGroupCommit<string>((ids) => boss.complete(name, ids));
  let stopping = false;

  async function execute(job: PgBoss.JobWithMetadata<T>): Promise<void> {
    let failure: { error: unknown } | undefined;
    try {
      await handler({ id: job.id, name, data: job.data, attempt: job.retryCount + 1 });
    } catch (error) {
      failure = { error };
    }
    // A handler that failed for a dropped connection is likely to find pg-boss's connections dropped
    // too: the record is tried again for a few seconds, since a job left active runs again only once
    // it expires (a minute or so; no other enqueue of its id can stand in for it).
    try {
      if (!failure) {
        await persistently(() => completions.add(job.id));
      } else {
        onError(failure.error);
        // pg-boss puts it back with the queue's fixed retry delay (the job's retry options).
        await persistently(() => boss.fail(name, job.id, errorRecord(failure.error)));
      }
    } catch (err) {
      // The job stays active; once it expires, maintenance puts it back and it runs again.
      onError(err);
    }
  }

  function run(job: PgBoss.JobWithMetadata<T>) {
    const done: Promise<void> = execute(job).finally(() => {
      running.delete(done);
      wake.signal();
    });
    running.add(done);
  }

  const loop = (async () => {
    while (!stopping) {
      const free = concurrency - running.size;
      if (free > 0) {
        try {
          // pg-boss's fetch already swallows database errors (returns []), so an outage means polling.
          const jobs = await boss.fetch<T>(name, { batchSize: free, includeMetadata: true });
          for (const job of jobs) run(job);
          if (jobs.length === free) deps.onBacklog();
        } catch (err) {
          onError(err);
        }
      }
      if (!stopping) await wake.sleep(pollingIntervalMs);
    }
  })();

  return {
    notify: () => wake.signal(),
    async stop() {
      stopping = true;
      wake.signal();
      await loop;
      await Promise.all(running);
    },
  };
}

function errorRecord(error: unknown): object {
  if (error instanceof Error) return { message: error.message, name: error.name, stack: error.stack };
  return { value: String(error) };
}
