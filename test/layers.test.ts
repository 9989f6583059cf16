import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { cruise, type IReporterOutput } from 'dependency-cruiser';
import { projections } from '../src/projections/registry.js';

const require = createRequire(import.meta.url);

describe('the dependency rules of src/ (.dependency-cruiser.cjs)', function () {
  this.timeout(60_000);

  it('hold: no import cycle, a pure domain, commands below their drivers, ports and adapters below the application', async () => {
    const config = require('../.dependency-cruiser.cjs');
    const result: IReporterOutput = await cruise(['src'], { ...config.options, validate: true, ruleSet: { forbidden: config.forbidden } });
    if (typeof result.output === 'string') throw new Error('dependency-cruiser answered a report, not results');
    const violations = result.output.summary.violations.map((v) => `${v.rule.name}: ${[v.from, ...(v.cycle?.map((c) => c.name) ?? [v.to])].join(' → ')}`);
    expect(result.output.summary.totalCruised, 'modules read').to.be.greaterThan(200);
    expect(violations).to.deep.equal([]);
  });

  it('read-model tables are read in src/read-models only (one module per read model) and written by their projections', () => {
    const tables = projections.flatMap((p) => p.tables);
    expect(tables).to.include.members(['messages', 'contacts', 'templates', 'campaign_stats']);
    // db('messages'), trx('contacts as c'), .join('messages as m', ...), and SQL naming one: FROM
    // templates, join api_keys, ...
    const naming = new RegExp(
      `(?:\\b(?:db|trx)\\(\\s*['"\`](?:${tables.join('|')})(?: as \\w+)?['"\`]|\\.(?:join|leftJoin|innerJoin|rightJoin)\\(\\s*['"\`](?:${tables.join('|')})\\b|\\b(?:FROM|JOIN|UPDATE|INTO)\\s+"?(?:${tables.join('|')})\\b)`,
      'i',
    );
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
    const root = join(import.meta.dirname, '..');
    const offenders = files(join(root, 'src'))
      .map((f) => relative(root, f))
      .filter((f) => !/^src\/(projections|read-models)\//.test(f))
      // erasure and retention delete a person's message copies kept outside the log, chosen by the messages table
      .filter((f) => f !== 'src/adapters/db/message-copies.ts')
      .filter((f) => naming.test(readFileSync(join(root, f), 'utf8')));
    expect(offenders).to.deep.equal([]);
  });
});
