import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

/** Another server process (`src/main.ts <role>`) on the same database, for cross-process tests. */
export async function spawnServer(role: 'api' | 'worker' | 'all', env: Record<string, string>): Promise<{ baseUrl: string; process: ChildProcess; stop(): Promise<void> }> {
  const port = await freePort();
  const main = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', main, role], {
    env: { ...process.env, LOG_LEVEL: 'silent', PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited: ${output}`);
    try {
      if (role === 'worker' || (await fetch(`${baseUrl}/healthz`)).ok) break;
    } catch {
      /* not yet listening */
    }
    if (Date.now() > deadline) throw new Error(`server did not start: ${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    baseUrl,
    process: child,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}
