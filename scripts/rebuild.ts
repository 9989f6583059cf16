/**
 * npm run projections:rebuild -- <name>
 * Builds a new generation of one read model from the start of the event log beside the live one, then
 * switches to it in one transaction (the API never reads an empty or half-built table).
 */
import cliProgress from 'cli-progress';
import { rebuildProjection } from '../src/projections/rebuild.js';
import { projections } from '../src/projections/registry.js';
import { runTool } from './run-tool.js';

const name = process.argv[2];
const projection = projections.find((p) => p.name === name);
if (!projection) {
  console.error(
    `${name ? `Unknown projection "${name}"` : 'Usage: npm run projections:rebuild -- <name>'}. Known: ${projections.map((p) => p.name).join(', ')}`,
  );
  process.exit(1);
}

await runTool(async ({ infra }) => {
  const tty = process.stdout.isTTY;
  const bar = new cliProgress.SingleBar({ format: `${name} [{bar}] {percentage}% | {value}/{total} events | {eta_formatted} left` }, cliProgress.Presets.shades_classic);
  let started = false;
  let lastLine = 0;
  try {
    const result = await rebuildProjection({
      db: infra.db,
      eventStore: infra.eventStore,
      projection,
      onProgress(done, total) {
        if (tty) {
          if (!started) bar.start(total, done);
          started = true;
          bar.setTotal(total);
          bar.update(done);
        } else if (Date.now() - lastLine > 2000 || done === total) {
          lastLine = Date.now();
          console.log(`${name}: ${done}/${total} events`);
        }
      },
    });
    if (started) bar.stop();
    const rate = result.seconds > 0 ? Math.round(result.events / result.seconds) : result.events;
    console.log(`Rebuilt ${name} as generation ${result.generation}: ${result.events} events in ${result.seconds.toFixed(1)} s (${rate} events/s); now live.`);
    return 0;
  } catch (err) {
    if (started) bar.stop();
    console.error(`Rebuild of ${name} failed: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
});
