import { formatReport, runChaos } from './chaos/suite.js';

/**
 * The fault-injection suite (docs/reliability.md): `npm run chaos` runs three seeds in a row;
 * `npm run chaos -- --seed 42 --duration 60` one seed of its own; `--queue pg-boss` runs the job queue
 * in PostgreSQL (as `npm start` does) instead of BullMQ. Exits 1 if anything was lost,
 * doubled or left inconsistent.
 */
const args = process.argv.slice(2);
const option = (name: string) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? args[at + 1] : undefined;
};
const durationMs = Number(option('duration') ?? 60) * 1000;
const queue = option('queue') === 'pg-boss' ? ({ kind: 'pg-boss' } as const) : undefined;
const seeds = option('seed') ? [Number(option('seed'))] : Array.from({ length: Number(option('runs') ?? 3) }, () => Math.floor(Math.random() * 2 ** 31));

let failed = false;
for (const seed of seeds) {
  console.log(`chaos: seed ${seed}, ${durationMs / 1000} s of load and faults`);
  const report = await runChaos({ seed, durationMs, queue, log: (line) => console.log(line) });
  console.log(formatReport(report));
  console.log('');
  if (report.lost.length || report.doubled.length || report.problems.length) failed = true;
}
process.exit(failed ? 1 : 0);
