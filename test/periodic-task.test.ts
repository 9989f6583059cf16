import { expect } from 'chai';
import sinon from 'sinon';
import { createLogger } from '../src/logger.js';
import { every } from '../src/periodic-task.js';

describe('every: a periodic task', () => {
  let clock: sinon.SinonFakeTimers;
  beforeEach(() => (clock = sinon.useFakeTimers()));
  afterEach(() => clock.restore());
  const logger = createLogger('silent');
  const HOUR = 3_600_000;

  it('runs every period, first after one period', async () => {
    const runs: number[] = [];
    const stop = every(HOUR, async () => void runs.push(Date.now()), logger, 'task');
    await clock.tickAsync(2 * HOUR);
    await stop();
    expect(runs).to.deep.equal([HOUR, 2 * HOUR]);
  });

  it('soonAfterStart: also a minute after the start, so a worker restarted more often than its period still runs it', async () => {
    const runs: number[] = [];
    const stop = every(HOUR, async () => void runs.push(Date.now()), logger, 'task', { soonAfterStart: true });
    await clock.tickAsync(HOUR);
    await stop();
    expect(runs).to.deep.equal([60_000, HOUR]);
  });

  it('never runs twice at once, and a failure waits for the next turn', async () => {
    let calls = 0;
    let finish!: () => void;
    const stop = every(1_000, () => (++calls === 1 ? new Promise<void>((r) => (finish = r)) : Promise.reject(new Error('no'))), logger, 'task');
    await clock.tickAsync(3_000);
    expect(calls).to.equal(1);
    finish();
    await clock.tickAsync(2_000);
    expect(calls).to.equal(3);
    await stop();
  });

  it('stopped before its first run, runs nothing', async () => {
    let calls = 0;
    const stop = every(HOUR, async () => void calls++, logger, 'task', { soonAfterStart: true });
    await stop();
    await clock.tickAsync(2 * HOUR);
    expect(calls).to.equal(0);
  });
});
