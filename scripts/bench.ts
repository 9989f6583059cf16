/**
 * `npm run bench [-- <name filter>]`: runs every module in scripts/bench/NN-*.ts and prints each
 * figure with its same-run baseline and ratio. BENCH_SCALE=0.01 shrinks the data sizes for a quick
 * look; the issues' targets are stated at BENCH_SCALE=1 (the default). Results also go to
 * bench-results.json.
 */
import { readdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import type { BenchFigure, BenchModule } from './bench/lib.js';
import { dropTemplates } from '../test/support/db.js';
import { stopEmbeddedServer } from '../test/support/postgres-server.js';

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'bench');
const filter = process.argv[2];
const scale = Number(process.env.BENCH_SCALE ?? '1');
if (!(scale > 0)) throw new Error('BENCH_SCALE must be a positive number');

const files = (await readdir(dir)).filter((f) => /^\d+-.*\.ts$/.test(f)).sort();
const results: Array<{ module: string; figures: BenchFigure[] }> = [];
let failed = false;
for (const file of files) {
  const mod: BenchModule = (await import(path.join(dir, file))).default;
  if (filter && !mod.name.includes(filter) && !file.includes(filter)) continue;
  console.log(`\n## ${mod.name}`);
  try {
    const figures = await mod.run({ scale, log: (line) => console.log(`   ${line}`) });
    for (const f of figures) console.log(format(f));
    results.push({ module: mod.name, figures });
  } catch (err) {
    failed = true;
    console.error(`   failed: ${err instanceof Error ? err.stack : String(err)}`);
  }
}
await writeFile('bench-results.json', JSON.stringify({ at: new Date().toISOString(), scale, node: process.version, results }, null, 2));
// The modules' databases are copies of a migrated template made once per process, as in the tests: it
// goes with the process (each run left one behind before).
await dropTemplates();
await stopEmbeddedServer();
process.exit(failed ? 1 : 0);

function format(f: BenchFigure): string {
  const n = (v: number) => (v >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(2));
  let line = ` - ${f.name}: ${n(f.value)} ${f.unit}`;
  if (f.baseline) line += `  (baseline ${f.baseline.name}: ${n(f.baseline.value)} ${f.unit}; ratio ${(f.value / f.baseline.value).toFixed(2)}×)`;
  if (f.aim) line += `  [aim ${f.aim}]`;
  return line;
}
