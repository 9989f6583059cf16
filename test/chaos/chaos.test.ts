import { expect } from 'chai';
import { redisReachable } from '../support/redis.js';

import { formatReport, runChaos, type ChaosReport } from '../../scripts/chaos/suite.js';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

// The short profile of `npm run chaos` (docs/reliability.md): 2 API and 2 worker processes, one
// seeded run of load and faults on each job queue. CHAOS_SEED replays a failing run.
describe('fault injection, short profile (npm run chaos runs the long one)', function () {
  this.timeout(240_000);
  const seed = () => Number(process.env.CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));

  it('on BullMQ: loses nothing, doubles nothing and keeps read models equal to their streams while processes, Redis, PostgreSQL and providers fail', async function () {
    if (!(await redisReachable(redisUrl))) {
      if (process.env.CI === 'true') throw new Error('Redis is not reachable, and CI needs this suite');
      this.skip();
    }
    expectNothingLost(await runChaos({ seed: seed(), durationMs: 25_000, clients: 4, queue: { kind: 'bullmq', redisUrl } }));
  });

  it('on pg-boss (npm start\'s queue): the same while processes, PostgreSQL and providers fail', async () => {
    expectNothingLost(await runChaos({ seed: seed(), durationMs: 25_000, clients: 4, queue: { kind: 'pg-boss' } }));
  });
});

function expectNothingLost(report: ChaosReport) {
  const table = formatReport(report);
  expect(report.lost, table).to.deep.equal([]);
  expect(report.doubled, table).to.deep.equal([]);
  expect(report.mismatched, table).to.deep.equal([]);
  expect(report.webhooks.missing, table).to.deep.equal([]);
  expect(report.problems, table).to.deep.equal([]);
  expect(report.cap.accepted, table).to.be.at.most(report.cap.limit);
  expect(report.accepted.email, table).to.be.greaterThan(0);
  // a kill is skipped while the other process of its kind is still restarting
  expect(report.faults.filter((f) => !f.skipped).length, table).to.be.at.least(8);
}
