/**
 * `npm test`'s runner: the test files in two mocha processes at once, each on a PostgreSQL server of
 * its own (the first on DATABASE_URL or 127.0.0.1:5432 as before, the second on an embedded server it
 * starts, as a machine without PostgreSQL does). Two servers, because the PostgreSQL event store's
 * readers take no event committed after the server's oldest running transaction: on one server, one
 * file's open transaction holds back another file's reads and its waits time out. Much of the suite
 * is waiting on real processes (leases running out, restarts), so two streams overlap well even on two
 * cores. Each stream's output is printed whole when it ends; the exit code is the first failure's.
 *
 * With arguments (files, mocha options) it is plain mocha over them: `npm test -- test/http/x.test.ts`.
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const mocha = createRequire(import.meta.url).resolve('mocha/bin/mocha.js');

/**
 * The stream on the first server: the files that start real processes and wait on them, and those
 * that run the server's own `pg_dump` (an embedded server is a newer PostgreSQL than the machine's
 * tools). The rest go to the other stream.
 */
const ON_FIRST_SERVER = /^test\/(jobs|resilience|chaos|main|scripts)\/|^test\/http\/(idempotency-lease|contacts-erase|contacts-erase-idempotency|retention|provider-event-ids)\.test\.ts$/;

function run(args: string[], env: NodeJS.ProcessEnv, buffered: boolean): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [mocha, ...args], { cwd: root, env, stdio: buffered ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    let output = '';
    child.stdout?.on('data', (chunk) => (output += chunk));
    child.stderr?.on('data', (chunk) => (output += chunk));
    child.on('exit', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });
}

const args = process.argv.slice(2);
if (args.length > 0) process.exit((await run(args, process.env, false)).code);

const files = (readdirSync(`${root}test`, { recursive: true }) as string[])
  .map((f) => `test/${f.split('\\').join('/')}`)
  .filter((f) => f.endsWith('.test.ts'))
  .sort();
const streams = [
  { name: 'processes, faults and pg_dump', files: files.filter((f) => ON_FIRST_SERVER.test(f)), env: process.env },
  { name: 'the rest, on an embedded PostgreSQL', files: files.filter((f) => !ON_FIRST_SERVER.test(f)), env: { ...process.env, TEST_OWN_POSTGRES: 'true' } },
];
const started = Date.now();
console.log(`${files.length} test files in two streams: ${streams.map((s) => `${s.name} (${s.files.length})`).join(', ')}`);
const results = await Promise.all(
  streams.map(async (s) => {
    const result = await run(s.files, s.env, true);
    console.log(`\n===== ${s.name}: ${s.files.length} files, exit ${result.code}, ${Math.round((Date.now() - started) / 1000)} s =====\n${result.output}`);
    return result;
  }),
);
// A CI log is often read from its end: the failures of every stream are repeated last.
for (const [i, result] of results.entries()) {
  if (result.code === 0) continue;
  const at = result.output.search(/^ +\d+ failing/m);
  const failures = at >= 0 ? result.output.slice(at).split('\n').slice(0, 300) : result.output.split('\n').slice(-100);
  console.log(`\n===== failures of ${streams[i].name} (exit ${result.code}) =====\n${failures.join('\n')}`);
}
process.exit(results.find((r) => r.code !== 0)?.code ?? 0);
