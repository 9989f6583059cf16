import { expect } from 'chai';
import { describeZodError, listZodIssues } from '../../../src/domain/errors.js';
import { nonFinitePaths, templateVariables } from '../../../src/domain/templates/variables.js';

describe('domain/templates/variables: any JSON, numbers finite', () => {
  it('takes strings, finite numbers, booleans, lists and objects', () => {
    const ok = JSON.parse('{"a":"x","n":1e308,"m":-0,"b":true,"l":[1,2,{"c":null}],"o":{"p":1.5}}');
    expect(templateVariables.parse(ok)).to.deep.equal(ok);
  });

  it('refuses a number that parsed as ±Infinity, naming its field', () => {
    const parsed = JSON.parse('{"x":1e999}');
    const result = templateVariables.safeParse(parsed);
    expect(result.success).to.equal(false);
    expect(describeZodError(result.error!)).to.equal('x: must be a finite number');
    const nested = templateVariables.safeParse(JSON.parse('{"a":{"b":[1,-1e999]},"c":1e400}'));
    expect(listZodIssues(nested.error!)).to.deep.equal([
      { field: 'a.b.1', message: 'must be a finite number' },
      { field: 'c', message: 'must be a finite number' },
    ]);
  });

  it('finds them in document order at any depth, without recursion', () => {
    expect(nonFinitePaths(JSON.parse('[1e999,{"a":[-1e999]}]'))).to.deep.equal([[0], [1, 'a', 0]]);
    const deep = JSON.parse('['.repeat(100_000) + '1e999' + ']'.repeat(100_000));
    expect(nonFinitePaths(deep)[0]).to.have.length(100_000);
  });
});
