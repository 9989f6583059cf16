// A stand-in for the workers thread's first module, scripted by workerData.env.SCRIPT: `fail` fails to
// start, `crash` starts and then throws, `serve` starts and answers every request until told to stop.
import { parentPort, workerData } from 'node:worker_threads';

const script = workerData.env.SCRIPT;
if (script === 'fail') {
  parentPort.postMessage({ kind: 'failed', message: 'the database is gone' });
  throw new Error('the database is gone');
}
parentPort.postMessage({ kind: 'started' });
if (script === 'crash') setTimeout(() => { throw new Error('a bug in a job handler'); }, 50);
parentPort.on('message', (request) => {
  const value = request.kind === 'readiness' ? { ready: true, checks: { queue: { ok: true } } } : request.kind === 'snapshot' ? [] : undefined;
  parentPort.postMessage({ kind: 'answer', id: request.id, value });
  if (request.kind === 'stop') parentPort.close();
});
