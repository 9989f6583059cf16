import { expect } from 'chai';
import type { JobQueue } from '../../../src/ports/job-queue.js';
import { createSideEffectLeases, recordSideEffects, releaseSideEffect, startSideEffectSweeper, type SideEffect } from '../../../src/adapters/db/side-effects.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';

describe('side-effect leases (claims and completions of concurrent handlers)', () => {
  let db: TestDatabase;
  const enqueued: { name: string; data: any; jobId?: string }[] = [];
  const queue: JobQueue = {
    async enqueue(name, data, opts) {
      enqueued.push({ name, data, jobId: opts?.jobId });
    },
    async work() {},
    async close() {},
  };
  const effect = (id: string, extra: Partial<SideEffect> = {}): SideEffect => ({ id, kind: 'test.job', payload: { n: id }, runAfter: new Date(), ...extra });
  /** A job as the queue hands it over: queued for `dueAt`, by default now. */
  const job = (id: string, dueAt = Date.now()) => ({ sideEffectId: id, dueAt });

  before(async () => {
    db = await createTestDatabase();
  });
  after(async () => db.drop());
  beforeEach(async () => {
    enqueued.length = 0;
    await db.db('side_effects').delete();
  });

  it('claims each due, open effect for exactly one of its concurrent askers', async () => {
    await db.db.transaction((trx) =>
      recordSideEffects(trx, [effect('a'), effect('b'), effect('later', { runAfter: new Date(Date.now() + 60_000) }), effect('done')]),
    );
    await db.db('side_effects').where({ id: 'done' }).update({ status: 'done' });
    const leases = createSideEffectLeases(db.db, queue);
    // 'later': a job queued for now, of an effect since rescheduled for a minute later
    const claimed = await Promise.all(['a', 'b', 'a', 'later', 'done', 'missing'].map((id) => leases.claim(job(id))));
    const fresh = { leaseLost: false };
    expect(claimed).to.deep.equal([fresh, fresh, null, null, null, null]);
    expect(await Promise.all(['a', 'b'].map((id) => leases.claim(job(id))))).to.deep.equal([null, null]);
    const rows = await db.db('side_effects').whereIn('id', ['a', 'b']).select('status', 'claimed_until');
    for (const r of rows) {
      expect(r.status).to.equal('running');
      expect(new Date(r.claimed_until).getTime()).to.be.greaterThan(Date.now() + 10_000);
    }
  });

  it('a job naming an effect this database never recorded (another deployment\'s, on a shared queue) is refused and logged; one merely taken or done is not logged', async () => {
    await db.db.transaction((trx) => recordSideEffects(trx, [effect('a'), effect('done')]));
    await db.db('side_effects').where({ id: 'done' }).update({ status: 'done' });
    const warnings: unknown[][] = [];
    const leases = createSideEffectLeases(db.db, queue, { logger: { warn: (...args: unknown[]) => void warnings.push(args) } as never });
    const claimed = await Promise.all(['a', 'a', 'done', 'elsewhere'].map((id) => leases.claim(job(id))));
    expect(claimed).to.deep.equal([{ leaseLost: false }, null, null, null]);
    expect(warnings).to.have.length(1);
    expect(warnings[0][0]).to.deep.equal({ sideEffectId: 'elsewhere' });
    expect(warnings[0][1]).to.match(/REDIS_PREFIX/);
  });

  it('takes over a claim whose lease ran out, saying so; a claim given back is taken fresh', async () => {
    await db.db.transaction((trx) => recordSideEffects(trx, [effect('a')]));
    const dying = createSideEffectLeases(db.db, queue, { leaseMs: 1 });
    expect(await dying.claim(job('a'))).to.deep.equal({ leaseLost: false });
    dying.letGo('a');
    await new Promise((r) => setTimeout(r, 20));
    const leases = createSideEffectLeases(db.db, queue);
    const taken = await leases.claim(job('a'));
    expect(taken).to.include({ leaseLost: true });
    expect(taken!.lostAt!.getTime()).to.be.lessThan(Date.now());
    await releaseSideEffect(db.db, 'a');
    expect(await leases.claim(job('a'))).to.deep.equal({ leaseLost: false });
  });

  it('a lost lease goes to exactly one of the workers asking for it at once (separate statements)', async () => {
    await db.db.transaction((trx) => recordSideEffects(trx, [effect('a')]));
    const dying = createSideEffectLeases(db.db, queue, { leaseMs: 1 });
    expect(await dying.claim(job('a'))).to.deep.equal({ leaseLost: false });
    dying.letGo('a');
    await new Promise((r) => setTimeout(r, 20));
    const workers = Array.from({ length: 8 }, () => createSideEffectLeases(db.db, queue));
    const claims = await Promise.all(workers.map((w) => w.claim(job('a'))));
    expect(claims.filter(Boolean).map((c) => c!.leaseLost)).to.deep.equal([true]);
  });

  it('a held claim is renewed by its heartbeat past its lease; once let go (its worker gone) another worker takes it over', async () => {
    await db.db.transaction((trx) => recordSideEffects(trx, [effect('a')]));
    const holder = createSideEffectLeases(db.db, queue, { leaseMs: 300 });
    expect(await holder.claim(job('a'))).to.deep.equal({ leaseLost: false });
    const other = createSideEffectLeases(db.db, queue, { leaseMs: 300 });
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 200));
      expect(await other.claim(job('a')), `still held after ${(i + 1) * 200} ms`).to.equal(null);
    }
    holder.letGo('a');
    await new Promise((r) => setTimeout(r, 400));
    expect(await other.claim(job('a'))).to.include({ leaseLost: true });
    other.letGo('a');
  });

  it('completes concurrently and makes only the next pending effect of each ordering key due, queued once', async () => {
    const later = new Date(Date.now() + 3_600_000);
    await db.db.transaction((trx) =>
      recordSideEffects(trx, [
        effect('a1', { orderingKey: 'A' }),
        effect('b1', { orderingKey: 'B' }),
        effect('a2', { orderingKey: 'A', runAfter: later }),
        effect('b2', { orderingKey: 'B', runAfter: later }),
        effect('a3', { orderingKey: 'A', runAfter: later }),
        effect('solo'),
      ]),
    );
    const leases = createSideEffectLeases(db.db, queue);
    expect(await Promise.all(['a1', 'b1', 'solo'].map((id) => leases.claim(job(id))))).to.deep.equal([0, 1, 2].map(() => ({ leaseLost: false })));
    await Promise.all(['a1', 'b1', 'solo'].map((id) => leases.markDone(id)));
    const rows = await db.db('side_effects').orderBy('seq').select('id', 'status', 'run_after');
    expect(rows.map((r) => [r.id, r.status])).to.deep.equal([
      ['a1', 'done'],
      ['b1', 'done'],
      ['a2', 'pending'],
      ['b2', 'pending'],
      ['a3', 'pending'],
      ['solo', 'done'],
    ]);
    const due = rows.filter((r) => new Date(r.run_after).getTime() < later.getTime()).map((r) => r.id);
    expect(due).to.include.members(['a2', 'b2']).and.not.include('a3');
    expect(enqueued.map((e) => e.data.sideEffectId).sort()).to.deep.equal(['a2', 'b2']);
    // each job says which time it was queued for: the time its effect was made due
    for (const e of enqueued) expect(e.data.dueAt).to.equal(new Date(rows.find((r) => r.id === e.data.sideEffectId)!.run_after).getTime());
  });

  it('an effect scheduled by a process whose clock runs ahead of the database is claimed by its job at once', async () => {
    // A host 5 s ahead records "now" as 5 s from the database's now, and queues the job with no delay.
    const hostNow = new Date(Date.now() + 5_000);
    await db.db.transaction((trx) => recordSideEffects(trx, [effect('ahead', { runAfter: hostNow }), effect('rescheduled', { runAfter: hostNow })]));
    const leases = createSideEffectLeases(db.db, queue);
    expect(await leases.claim(job('ahead', hostNow.getTime()))).to.deep.equal({ leaseLost: false });
    // an older job of an effect rescheduled since still leaves it alone, however the clocks stand
    expect(await leases.claim(job('rescheduled', hostNow.getTime() - 1))).to.equal(null);
    // a job queued before jobs said their time falls back to the clock, with a second of tolerance
    expect(await leases.claim({ sideEffectId: 'rescheduled' })).to.equal(null);
    await db.db('side_effects').where({ id: 'rescheduled' }).update({ run_after: new Date(Date.now() + 500) });
    expect(await leases.claim({ sideEffectId: 'rescheduled' })).to.deep.equal({ leaseLost: false });
  });

  it('the same effect asked for by an older and a current job in one batch is claimed once', async () => {
    const due = new Date(Date.now() + 5_000);
    await db.db.transaction((trx) => recordSideEffects(trx, [effect('x', { runAfter: due })]));
    const leases = createSideEffectLeases(db.db, queue);
    const claims = await Promise.all([leases.claim(job('x', due.getTime() - 10_000)), leases.claim(job('x', due.getTime()))]);
    expect(claims.filter(Boolean)).to.deep.equal([{ leaseLost: false }]);
  });

  it('the sweeper queues an overdue effect again under its plain job id, and one long overdue under an id of its own each minute', async () => {
    const ago = (ms: number) => new Date(Date.now() - ms);
    await db.db.transaction((trx) =>
      recordSideEffects(trx, [effect('due', { runAfter: ago(5_000) }), effect('late', { runAfter: ago(30_000) }), effect('stuck', { runAfter: ago(300_000) })]),
    );
    const sweeper = startSideEffectSweeper({ db: db.db, queue, intervalMs: 20, graceMs: 20_000 });
    try {
      const until = Date.now() + 5_000;
      while (enqueued.length < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    } finally {
      sweeper.stop();
    }
    const ids = new Map(enqueued.map((e) => [e.data.sideEffectId as string, e.jobId!]));
    const [late, stuck] = await db.db('side_effects').whereIn('id', ['late', 'stuck']).orderBy('id').select('run_after');
    // not yet its turn: the job queued with it may still run it
    expect(ids.has('due')).to.equal(false);
    expect(ids.get('late')).to.equal(`late@${new Date(late.run_after).getTime()}`);
    // a job of the plain id the queue keeps without running it cannot hold this one
    expect(ids.get('stuck')).to.match(new RegExp(`^stuck@${new Date(stuck.run_after).getTime()}~\\d+$`));
    expect(enqueued.find((e) => e.data.sideEffectId === 'stuck')!.data.dueAt).to.equal(new Date(stuck.run_after).getTime());
  });
});
