import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

const projectRoot = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Runs a TypeScript entry point of the project (`scripts/replay.ts`, `src/main.ts`) with tsx, as its
 * npm script would, to its end; killed after `timeoutMs` so a hung command fails the test instead.
 */
export function runTs(
  file: string,
  args: string[],
  env: Record<string, string>,
  options: { unset?: string[]; timeoutMs?: number } = {},
): Promise<CommandResult> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'silent', ...env };
  for (const name of options.unset ?? []) delete childEnv[name];
  const child = spawn(process.execPath, ['--import', 'tsx', file, ...args], { cwd: projectRoot, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}
