import { expect } from 'chai';
import { startWorkersThread } from '../src/workers-thread.js';

const scripted = new URL('./support/workers-thread-scripted.mjs', import.meta.url);
const never = () => expect.fail('onExit was called');

describe('the workers thread (npm start): starting, asking, stopping, and dying', () => {
  it('a thread that fails to start rejects the start with its reason', async () => {
    let caught: Error | undefined;
    await startWorkersThread({ SCRIPT: 'fail' }, never, scripted).catch((err: Error) => (caught = err));
    expect(caught?.message).to.equal('the database is gone');
  });

  it('answers for its readiness and metrics, and stopping it ends it without calling onExit', async () => {
    const thread = await startWorkersThread({ SCRIPT: 'serve' }, never, scripted);
    expect(await thread.observability.readiness()).to.deep.equal({ ready: true, checks: { queue: { ok: true } } });
    expect(await thread.observability.snapshot()).to.deep.equal([]);
    await thread.stop();
  });

  it('a thread that dies after it started is reported to onExit with its error', async () => {
    const died = new Promise<Error>((resolve) => void startWorkersThread({ SCRIPT: 'crash' }, resolve, scripted));
    expect((await died).message).to.equal('a bug in a job handler');
  });
});
