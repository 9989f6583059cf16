import { expect } from 'chai';
import { atMostEvery } from '../src/logger.js';

describe('atMostEvery', () => {
  it('logs the first at once, then at most one per interval, saying how many it left out', () => {
    let t = 0;
    const logged: [string, number][] = [];
    const log = atMostEvery<string>(30_000, (v, n) => logged.push([v, n]), () => t);
    for (const [at, v] of [[0, 'a'], [100, 'b'], [200, 'c'], [30_000, 'd'], [30_001, 'e'], [90_000, 'f']] as const) {
      t = at;
      log(v);
    }
    expect(logged).to.deep.equal([['a', 0], ['d', 2], ['f', 1]]);
  });
});
