import { expect } from 'chai';
import { createRequire } from 'node:module';
import { cruise, type IReporterOutput } from 'dependency-cruiser';

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
});
