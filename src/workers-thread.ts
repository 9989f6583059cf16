import { Worker } from 'node:worker_threads';
import type { ThreadObservability } from './observability.js';

export type ThreadRequest = { id: number; kind: 'snapshot' | 'readiness' | 'stop' };
export type ThreadReply =
  | { kind: 'started' }
  | { kind: 'failed'; message: string }
  | { kind: 'answer'; id: number; value?: unknown; error?: string };

export interface WorkersThread {
  observability: ThreadObservability;
  /** stops the workers (their last batches, jobs and pools), then the thread */
  stop(): Promise<void>;
}

/**
 * The `all` role's workers on a thread of their own: the API's event loop then never waits behind a
 * campaign's fan-out, a read model's batch or a provider call's bookkeeping, and the two loops use
 * both cores. Starts the worker role with `env` (the database the API thread opened) and resolves once
 * it runs; `onExit` hears of the thread ending by itself afterwards (a crash), which the process must
 * not outlive.
 */
export async function startWorkersThread(
  env: NodeJS.ProcessEnv,
  onExit: (err: Error) => void,
  /** the thread's first module (tests give one that fails on cue) */
  entry = new URL('./workers-thread-entry.mjs', import.meta.url),
): Promise<WorkersThread> {
  const thread = new Worker(entry, { workerData: { env } });
  const pending = new Map<number, { resolve(value: unknown): void; reject(err: Error): void }>();
  let nextId = 0;
  let stopping = false;
  let lastError: Error | undefined;

  let started: { resolve(): void; reject(err: Error): void };
  const running = new Promise<void>((resolve, reject) => (started = { resolve, reject }));
  let isRunning = false;
  thread.on('message', (reply: ThreadReply) => {
    if (reply.kind === 'started') {
      isRunning = true;
      started.resolve();
    } else if (reply.kind === 'failed') started.reject(new Error(reply.message));
    else {
      const waiting = pending.get(reply.id);
      pending.delete(reply.id);
      if (reply.error !== undefined) waiting?.reject(new Error(reply.error));
      else waiting?.resolve(reply.value);
    }
  });
  thread.on('error', (err) => (lastError = err));
  thread.on('exit', (code) => {
    const err = lastError ?? new Error(`the workers thread exited with code ${code}`);
    started.reject(err);
    for (const waiting of pending.values()) waiting.reject(err);
    pending.clear();
    if (isRunning && !stopping) onExit(err);
  });
  await running;

  const ask = <T>(kind: ThreadRequest['kind']) =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      thread.postMessage({ id, kind } satisfies ThreadRequest);
    });

  return {
    observability: { snapshot: () => ask('snapshot'), readiness: () => ask('readiness') },
    async stop() {
      stopping = true;
      try {
        await ask('stop');
      } finally {
        await thread.terminate();
      }
    },
  };
}
