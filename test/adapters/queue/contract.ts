import { expect } from 'chai';
import sinon from 'sinon';
import { randomBytes } from 'node:crypto';
import type { Job, JobQueue } from '../../../src/ports/job-queue.js';
import { startChildWorker, type ChildWorker } from './child-worker.js';
import { createQueueFromSpec, type QueueSpec } from './queue-spec.js';
import { sleep, waitFor } from './wait.js';

export interface QueueSubject {
  /** the adapter and its (short, test) timings; every client of the suite is built from it */
  spec: QueueSpec;
  /** the fixed delay before the queue re-runs a handler that threw */
  retryDelayMs: number;
  /** how long, at most, before a run lost with its worker (or a completion never recorded) runs again */
  lostRunRerunWithinMs: number;
  /** removes what the suite created (database, Redis keys) */
  dispose(): Promise<void>;
}

interface Deferred {
  promise: Promise<void>;
  resolve(): void;
}
const deferred = (): Deferred => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
};

/**
 * The JobQueue port's promises, run against each adapter. Every test uses queue names of its own,
 * and producers and consumers are separate clients (as API and worker processes would be).
 */
export function jobQueueContract(name: string, factory: () => Promise<QueueSubject>): void {
  describe(`JobQueue contract: ${name}`, function () {
    this.timeout(30_000);
    let subject: QueueSubject;
    let clients: JobQueue[] = [];
    let children: ChildWorker[] = [];

    before(async function () {
      subject = await factory();
    });
    after(async () => {
      await subject?.dispose();
    });
    afterEach(async () => {
      await Promise.all(children.map((c) => c.kill()));
      await Promise.all(clients.map((c) => c.close()));
      children = [];
      clients = [];
    });

    const client = (extra: { onError?: (err: unknown) => void } = {}) => {
      const queue = createQueueFromSpec(subject.spec, extra);
      clients.push(queue);
      return queue;
    };
    const queueName = () => `t_${randomBytes(5).toString('hex')}`;

    it('runs a job enqueued by one client on a worker of another, with its data', async () => {
      const producer = client();
      const consumer = client();
      const name = queueName();
      const seen: Job[] = [];
      await consumer.work(name, async (job) => void seen.push(job));
      const data = { to: 'zoë@example.com', nested: { n: 1, list: [1, 'two', null, true] } };
      await producer.enqueue(name, data);

      await waitFor('the job to run', () => seen.length === 1);
      expect(seen[0]!.data).to.deep.equal(data);
      expect(seen[0]!.name).to.equal(name);
      expect(seen[0]!.attempt).to.equal(1);
      expect(seen[0]!.id).to.be.a('string').and.not.equal('');
    });

    it('reports the jobs waiting in a queue, due and delayed, and none once they have run', async () => {
      const producer = client();
      const name = queueName();
      expect(await producer.depth!(name)).to.equal(0);
      await producer.enqueue(name, { n: 1 });
      await producer.enqueue(name, { n: 2 }, { delayMs: 60_000 });
      const depthBecomes = async (n: number) => {
        for (const deadline = Date.now() + 10_000; (await producer.depth!(name)) !== n; await sleep(50)) {
          if (Date.now() > deadline) throw new Error(`depth never became ${n}: ${await producer.depth!(name)}`);
        }
      };
      await depthBecomes(2);
      const consumer = client();
      await consumer.work(name, async () => {});
      await depthBecomes(1);
    });

    it('runs a delayed job no earlier than asked, and does run it', async () => {
      const producer = client();
      const consumer = client();
      const name = queueName();
      const ranAt = new Map<string, number>();
      await consumer.work<{ label: string }>(name, async (job) => void ranAt.set(job.data.label, Date.now()), { concurrency: 2 });

      const enqueuedAt = Date.now();
      await producer.enqueue(name, { label: 'later' }, { delayMs: 1500 });
      await producer.enqueue(name, { label: 'now' }, { delayMs: 0 });

      await waitFor('the undelayed job', () => ranAt.has('now'));
      expect(ranAt.has('later'), 'the delayed job ran early').to.equal(false);
      await waitFor('the delayed job', () => ranAt.has('later'), 6000);
      expect(ranAt.get('later')! - enqueuedAt).to.be.at.least(1500);
      expect(ranAt.get('now')! - enqueuedAt).to.be.below(1500);
    });

    it('runs a job once when its jobId is enqueued twice, in sequence or concurrently, by one client or two', async () => {
      const first = client();
      const second = client();
      const name = queueName();
      // ids with the characters queues are fussy about: ':' (BullMQ's separator), all digits, and two
      // ids that a careless encoding would merge
      const [sequential, concurrent, twoClients, lookalike] = ['side-effect:42@1700000000000', '12345', 'a:b', 'a%3Ab'];

      await first.enqueue(name, { id: sequential, copy: 0 }, { jobId: sequential });
      await first.enqueue(name, { id: sequential, copy: 1 }, { jobId: sequential });
      await Promise.all([0, 1, 2, 3, 4].map((copy) => first.enqueue(name, { id: concurrent, copy }, { jobId: concurrent })));
      await Promise.all(
        [0, 1, 2, 3, 4, 5].map((copy) => (copy % 2 ? first : second).enqueue(name, { id: twoClients, copy }, { jobId: twoClients })),
      );
      await second.enqueue(name, { id: lookalike, copy: 0 }, { jobId: lookalike });
      await first.enqueue(name, { id: 'sentinel', copy: 0 });

      const runs: Array<{ id: string; copy: number }> = [];
      await second.work<{ id: string; copy: number }>(name, async (job) => void runs.push(job.data));
      await waitFor('the sentinel enqueued after the duplicates', () => runs.some((r) => r.id === 'sentinel'));
      await sleep(300);

      const countOf = (id: string) => runs.filter((r) => r.id === id).length;
      expect({
        sequential: countOf(sequential),
        concurrent: countOf(concurrent),
        twoClients: countOf(twoClients),
        lookalike: countOf(lookalike),
      }).to.deep.equal({ sequential: 1, concurrent: 1, twoClients: 1, lookalike: 1 });
      expect(runs.find((r) => r.id === sequential)!.copy, 'the first enqueue wins').to.equal(0);
    });

    it('never runs more handlers at once than the concurrency option', async () => {
      const producer = client();
      const consumer = client();
      const name = queueName();
      for (let i = 0; i < 10; i++) await producer.enqueue(name, { i });

      let active = 0;
      let most = 0;
      let done = 0;
      await consumer.work(
        name,
        async () => {
          active += 1;
          most = Math.max(most, active);
          await sleep(150);
          active -= 1;
          done += 1;
        },
        { concurrency: 3 },
      );

      await waitFor('all ten jobs', () => done === 10, 10_000);
      expect(most).to.equal(3);
    });

    it('re-runs a handler that throws, after its retry delay, until it succeeds', async () => {
      const producer = client();
      const onError = sinon.spy();
      const consumer = client({ onError });
      const name = queueName();
      const runs: Array<{ attempt: number; at: number; data: unknown }> = [];
      const boom = new Error('provider unreachable');
      await consumer.work(name, async (job) => {
        runs.push({ attempt: job.attempt, at: Date.now(), data: job.data });
        if (runs.length < 3) throw boom;
      });
      await producer.enqueue(name, { keep: 'me' }, { jobId: 'flaky' });

      await waitFor('a third run', () => runs.length === 3, 10_000);
      await sleep(subject.retryDelayMs + 500);
      expect(runs.map((r) => r.attempt), 'runs, and nothing after the success').to.deep.equal([1, 2, 3]);
      expect(runs.every((r) => JSON.stringify(r.data) === '{"keep":"me"}')).to.equal(true);
      for (let i = 1; i < runs.length; i++) expect(runs[i]!.at - runs[i - 1]!.at).to.be.at.least(subject.retryDelayMs - 50);
      expect(onError.calledWith(boom), 'the failure is reported for logging').to.equal(true);
    });

    it('runs again a job whose worker process was killed mid-handler', async () => {
      const producer = client();
      const name = queueName();
      await producer.enqueue(name, { survives: 'the crash' }, { jobId: 'crash-1' });

      const child = startChildWorker(subject.spec, name);
      children.push(child);
      const taken = await child.started;
      expect(taken.attempt).to.equal(1);
      expect(taken.data).to.deep.equal({ survives: 'the crash' });
      await child.kill();
      const killedAt = Date.now();

      const runs: Job[] = [];
      const rescuer = client();
      await rescuer.work(name, async (job) => void runs.push(job));
      await waitFor('another worker to run the lost job', () => runs.length === 1, subject.lostRunRerunWithinMs + 5000);
      expect(runs[0]!.data).to.deep.equal({ survives: 'the crash' });
      expect(runs[0]!.id).to.equal(taken.id);
      expect(runs[0]!.attempt).to.equal(2);
      expect(Date.now() - killedAt).to.be.below(subject.lostRunRerunWithinMs + 5000);
    });

    it('close() takes no new job, waits for running handlers, and their completion is kept', async () => {
      const producer = client();
      const closing = client();
      const name = queueName();
      const runs: string[] = [];
      const slowStarted = deferred();
      let slowFinished = false;
      await closing.work<{ label: string }>(name, async (job) => {
        runs.push(job.data.label);
        slowStarted.resolve();
        await sleep(700);
        slowFinished = true;
      });
      await producer.enqueue(name, { label: 'slow' });
      await slowStarted.promise;

      const closed = closing.close();
      await producer.enqueue(name, { label: 'after close' });
      await closed;
      expect(slowFinished, 'close() returned before the running handler finished').to.equal(true);
      await sleep(300);
      expect(runs).to.deep.equal(['slow']);

      // A new worker gets the job enqueued during close, and not the finished one again.
      const successor = client();
      await successor.work<{ label: string }>(name, async (job) => void runs.push(job.data.label));
      await waitFor('the job enqueued during close', () => runs.includes('after close'));
      await sleep(subject.lostRunRerunWithinMs);
      expect(runs).to.deep.equal(['slow', 'after close']);
    });
  });
}
