import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { QueueSpec } from './queue-spec.js';
import { onJsonLines } from '../../support/json-lines.js';

const fixture = fileURLToPath(new URL('./fixtures/hang-in-handler.ts', import.meta.url));
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

export interface StartedJob {
  id: string;
  attempt: number;
  data: unknown;
}

export interface ChildWorker {
  /** resolves with the job once the child's handler has it (and hangs in it) */
  started: Promise<StartedJob>;
  /** SIGKILL: no shutdown code runs, as when a machine or container dies */
  kill(): Promise<void>;
}

/** A real separate worker process for the same queue (fixtures/hang-in-handler.ts). */
export function startChildWorker(spec: QueueSpec, name: string, timeoutMs = 15_000): ChildWorker {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', fixture, JSON.stringify({ spec, name })], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const started = new Promise<StartedJob>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`child worker took no job within ${timeoutMs} ms\n${stderr}`)), timeoutMs);
    onJsonLines(child.stdout!, (message: { event: string } & StartedJob) => {
      if (message.event === 'started') {
        clearTimeout(timer);
        resolve({ id: message.id, attempt: message.attempt, data: message.data });
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`child worker exited (${code ?? signal}) before taking a job\n${stderr}`));
    });
  });
  started.catch(() => {});

  return {
    started,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
