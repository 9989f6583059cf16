import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { sealedStoreContract } from './sealed-contract.js';
import { WrongExpectedRevisionError, type EventStore, type NewEvent, type RecordedEvent } from '../../../src/ports/event-store.js';

const ev = (type = 'Tested', data: unknown = { n: 1 }): NewEvent => ({ id: randomUUID(), type, data });

async function until(check: () => boolean, timeoutMs = 5000) {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Every promise of the EventStore port; run against each adapter. */
export function eventStoreContract(name: string, factory: () => Promise<{ store: EventStore; cleanup(): Promise<void> }>) {
  describe(`EventStore contract: ${name}`, function () {
    let store: EventStore;
    let cleanup: () => Promise<void>;
    // Stream ids unique per test so suites can share a store.
    let s: string;

    before(async function () {
      ({ store, cleanup } = await factory());
    });
    after(async () => cleanup?.());
    beforeEach(() => {
      s = `test-${randomUUID()}`;
    });

    it('appends with no_stream, then with the exact revision', async () => {
      const r1 = await store.append(s, [ev(), ev()], { expectedRevision: 'no_stream' });
      expect(r1.nextRevision).to.equal(1);
      const r2 = await store.append(s, [ev()], { expectedRevision: 1 });
      expect(r2.nextRevision).to.equal(2);
      const events = await store.readStream(s);
      expect(events.map((e) => e.revision)).to.deep.equal([0, 1, 2]);
    });

    it('refuses a wrong expected revision with the typed error and the actual revision', async () => {
      await store.append(s, [ev(), ev()]);
      for (const expected of [0, 5, 'no_stream'] as const) {
        try {
          await store.append(s, [ev()], { expectedRevision: expected });
          expect.fail('should have thrown');
        } catch (err) {
          expect(err).to.be.instanceOf(WrongExpectedRevisionError);
          expect((err as WrongExpectedRevisionError).actual).to.equal(1);
          expect((err as WrongExpectedRevisionError).streamId).to.equal(s);
        }
      }
      expect(await store.readStream(s)).to.have.length(2);
    });

    it('stream_exists needs the stream; any never checks', async () => {
      const err = await store.append(s, [ev()], { expectedRevision: 'stream_exists' }).catch((e) => e);
      expect(err).to.be.instanceOf(WrongExpectedRevisionError);
      expect(err.actual).to.equal('no_stream');
      await store.append(s, [ev()], { expectedRevision: 'any' });
      await store.append(s, [ev()], { expectedRevision: 'stream_exists' });
      await store.append(s, [ev()]);
      expect(await store.readStream(s)).to.have.length(3);
    });

    it('is idempotent: the same event ids append nothing and give the same result, even after the stream moved on', async () => {
      const batch = [ev(), ev()];
      const first = await store.append(s, batch, { expectedRevision: 'no_stream' });
      const again = await store.append(s, batch, { expectedRevision: 'no_stream' });
      expect(again).to.deep.equal(first);
      await store.append(s, [ev()]);
      const later = await store.append(s, batch, { expectedRevision: 'no_stream' });
      expect(later).to.deep.equal(first);
      expect(await store.readStream(s)).to.have.length(3);
    });

    it('reads a stream from a revision, and a missing stream as []', async () => {
      await store.append(s, [ev('A'), ev('B'), ev('C')]);
      expect((await store.readStream(s, { fromRevision: 1 })).map((e) => e.type)).to.deep.equal(['B', 'C']);
      expect(await store.readStream(`${s}-missing`)).to.deep.equal([]);
    });

    it('answers concurrent appends each on its own: a conflict fails that append alone', async () => {
      await store.append(`${s}-b`, [ev()]);
      const settled = await Promise.allSettled([
        store.append(`${s}-a`, [ev('A0')], { expectedRevision: 'no_stream' }),
        store.append(`${s}-b`, [ev('B1')], { expectedRevision: 5 }),
        store.append(`${s}-c`, [ev('C0'), ev('C1')], { expectedRevision: 'no_stream' }),
        store.append(`${s}-b`, [ev('B1')], { expectedRevision: 0 }),
        store.append(`${s}-b`, [ev('B1')], { expectedRevision: 0 }),
      ]);
      expect(settled.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'rejected']);
      expect((settled[1] as PromiseRejectedResult).reason).to.be.instanceOf(WrongExpectedRevisionError);
      expect((settled[4] as PromiseRejectedResult).reason.actual).to.equal(1);
      expect((settled[2] as PromiseFulfilledResult<{ nextRevision: number }>).value.nextRevision).to.equal(1);
      expect((await store.readStream(`${s}-a`)).map((e) => e.type)).to.deep.equal(['A0']);
      expect((await store.readStream(`${s}-b`)).map((e) => e.revision)).to.deep.equal([0, 1]);
      expect((await store.readStream(`${s}-c`)).map((e) => e.type)).to.deep.equal(['C0', 'C1']);
    });

    it('answers concurrent appends to distinct streams each on its own, whatever kind of expectation fails', async () => {
      await store.append(`${s}-exists`, [ev('E0')]);
      await store.append(`${s}-moved`, [ev('M0'), ev('M1')]);
      const settled = await Promise.allSettled([
        store.append(`${s}-new`, [ev('N0'), ev('N1')], { expectedRevision: 'no_stream' }),
        store.append(`${s}-exists`, [ev('E1')], { expectedRevision: 'no_stream' }),
        store.append(`${s}-moved`, [ev('M2')], { expectedRevision: 0 }),
        store.append(`${s}-missing`, [ev('X0')], { expectedRevision: 'stream_exists' }),
        store.append(`${s}-any`, [ev('A0')], { expectedRevision: 'any' }),
        store.append(`${s}-missing-exact`, [ev('Y0')], { expectedRevision: 3 }),
      ]);
      expect(settled.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected', 'rejected', 'rejected', 'fulfilled', 'rejected']);
      const actual = settled.map((r) => (r.status === 'rejected' ? (r.reason as WrongExpectedRevisionError).actual : undefined));
      expect(actual).to.deep.equal([undefined, 0, 1, 'no_stream', undefined, 'no_stream']);
      settled.forEach((r) => r.status === 'rejected' && expect(r.reason).to.be.instanceOf(WrongExpectedRevisionError));
      expect((settled[0] as PromiseFulfilledResult<{ nextRevision: number }>).value.nextRevision).to.equal(1);
      expect((await store.readStream(`${s}-new`)).map((e) => [e.type, e.revision])).to.deep.equal([['N0', 0], ['N1', 1]]);
      expect((await store.readStream(`${s}-exists`)).map((e) => e.type)).to.deep.equal(['E0']);
      expect((await store.readStream(`${s}-moved`)).map((e) => e.type)).to.deep.equal(['M0', 'M1']);
      expect(await store.readStream(`${s}-missing`)).to.deep.equal([]);
      expect((await store.readStream(`${s}-any`)).map((e) => e.type)).to.deep.equal(['A0']);
    });

    it('appends the same events raced by a retry once, and answers both callers alike', async () => {
      const batch = [ev(), ev()];
      const [first, second] = await Promise.all([
        store.append(s, batch, { expectedRevision: 'no_stream' }),
        store.append(s, batch, { expectedRevision: 'no_stream' }),
        store.append(`${s}-other`, [ev()]),
      ]);
      expect(second).to.deep.equal(first);
      expect(await store.readStream(s)).to.have.length(2);
    });

    it('answers concurrent reads of different streams and revisions each with its own events', async () => {
      await store.append(`${s}-x`, [ev('X0'), ev('X1'), ev('X2')]);
      await store.append(`${s}-y`, [ev('Y0')]);
      const reads = await Promise.all([
        store.readStream(`${s}-x`),
        store.readStream(`${s}-y`),
        store.readStream(`${s}-x`, { fromRevision: 2 }),
        store.readStream(`${s}-missing`),
        store.readStream(`${s}-x`, { fromRevision: 1 }),
      ]);
      expect(reads.map((events) => events.map((e) => e.type))).to.deep.equal([['X0', 'X1', 'X2'], ['Y0'], ['X2'], [], ['X1', 'X2']]);
    });

    it('round-trips data, metadata and schema version', async () => {
      const data = { nested: { list: [1, 'two', null], flag: true }, text: 'héllo ✓' };
      await store.append(s, [{ id: randomUUID(), type: 'Rich', data, metadata: { actor: 'user:1', correlationId: 'c-1' }, schemaVersion: 3 }]);
      const [e] = await store.readStream(s);
      expect(e.data).to.deep.equal(data);
      expect(e.metadata).to.deep.include({ actor: 'user:1', correlationId: 'c-1' });
      expect(e.schemaVersion).to.equal(3);
      expect(e.recordedAt).to.be.instanceOf(Date);
    });

    it('reads all in order, after a position (exclusive), with a limit and stream prefixes', async () => {
      const a = `${s}-a`;
      const b = `${s}-b`;
      await store.append(a, [ev('A1')]);
      await store.append(b, [ev('B1')]);
      await store.append(a, [ev('A2')]);
      const mine = (await store.readAll({ streamPrefixes: [s], limit: 1000 })).filter((e) => e.streamId.startsWith(s));
      expect(mine.map((e) => e.type)).to.deep.equal(['A1', 'B1', 'A2']);
      const after = await store.readAll({ after: mine[0].position, streamPrefixes: [s] });
      expect(after.map((e) => e.type)).to.deep.equal(['B1', 'A2']);
      expect(await store.readAll({ after: mine[0].position, streamPrefixes: [s], limit: 1 })).to.have.length(1);
      expect((await store.readAll({ streamPrefixes: [a] })).map((e) => e.type)).to.deep.equal(['A1', 'A2']);
    });

    it('subscribes: existing events, then new ones, in order, once; close stops delivery', async () => {
      await store.append(s, [ev('E1'), ev('E2')]);
      const seen: RecordedEvent[] = [];
      const sub = store.subscribe({ streamPrefixes: [s], onEvents: async (events) => void seen.push(...events) });
      await until(() => seen.length === 2);
      await store.append(s, [ev('E3')]);
      await store.append(`${s}-other`, [ev('E4')]);
      await until(() => seen.length === 4);
      await sub.close();
      await store.append(s, [ev('E5')]);
      await new Promise((r) => setTimeout(r, 300));
      expect(seen.map((e) => e.type)).to.deep.equal(['E1', 'E2', 'E3', 'E4']);
    });

    it('reads and subscribes to chosen event types only, with stream prefixes and a limit', async () => {
      await store.append(`${s}-a`, [ev('Kept'), ev('Skipped'), ev('Kept')]);
      await store.append(`${s}-b`, [ev('Other'), ev('Kept')]);
      await store.append(`${s}x`, [ev('Kept')]); // another prefix
      const kept = await store.readAll({ streamPrefixes: [`${s}-`], eventTypes: ['Kept', 'Other'] });
      expect(kept.map((e) => `${e.streamId.slice(s.length)}:${e.type}`)).to.deep.equal(['-a:Kept', '-a:Kept', '-b:Other', '-b:Kept']);
      expect((await store.readAll({ after: kept[0].position, streamPrefixes: [`${s}-`], eventTypes: ['Kept'], limit: 2 })).map((e) => e.revision)).to.deep.equal([2, 1]);
      const seen: string[] = [];
      const sub = store.subscribe({ streamPrefixes: [`${s}-`], eventTypes: ['Kept'], limit: 1, onEvents: async (events) => void seen.push(...events.map((e) => e.type)) });
      try {
        await until(() => seen.length === 3);
        await store.append(`${s}-a`, [ev('Skipped'), ev('Kept')]);
        await until(() => seen.length === 4);
        await new Promise((r) => setTimeout(r, 200));
        expect(seen).to.deep.equal(['Kept', 'Kept', 'Kept', 'Kept']);
      } finally {
        await sub.close();
      }
    });

    it('streamRevisions (where the store has it): the current revision of each stream that exists', async function () {
      if (!store.streamRevisions) this.skip();
      await store.append(`${s}-a`, [ev(), ev(), ev()]);
      await store.append(`${s}-b`, [ev()]);
      const revisions = await store.streamRevisions!([`${s}-a`, `${s}-b`, `${s}-none`]);
      expect([...revisions].sort()).to.deep.equal([
        [`${s}-a`, 2],
        [`${s}-b`, 0],
      ]);
      expect(await store.streamRevisions!([])).to.deep.equal(new Map());
    });

    describe('appendMany (stores that commit across streams)', () => {
      beforeEach(function () {
        if (!store.appendMany) this.skip();
      });
      const comparable = (r: { nextRevision: number; position: { commit: bigint; prepare: bigint } }) => ({ ...r, position: `${r.position.commit}:${r.position.prepare}` });

      it('appends to each stream with its own expected revision, results in input order, positions in input order', async () => {
        await store.append(`${s}-b`, [ev('B0')]);
        await store.append(`${s}-c`, [ev('C0'), ev('C1')]);
        const results = await store.appendMany!([
          { streamId: `${s}-a`, expectedRevision: 'no_stream', events: [ev('A0'), ev('A1')] },
          { streamId: `${s}-b`, expectedRevision: 0, events: [ev('B1')] },
          { streamId: `${s}-c`, expectedRevision: 'stream_exists', events: [ev('C2')] },
          { streamId: `${s}-d`, expectedRevision: 'any', events: [ev('D0')] },
          { streamId: `${s}-c`, expectedRevision: 'any', events: [ev('C3')] },
        ]);
        expect(results.map((r) => r.nextRevision)).to.deep.equal([1, 1, 2, 0, 3]);
        const all = (await store.readAll({ streamPrefixes: [s], limit: 100 })).filter((e) => e.streamId.startsWith(s));
        expect(all.map((e) => `${e.type}@${e.revision}`)).to.deep.equal(['B0@0', 'C0@0', 'C1@1', 'A0@0', 'A1@1', 'B1@1', 'C2@2', 'D0@0', 'C3@3']);
        // each result is the position of that stream's last event in this call
        const last = (type: string) => all.find((e) => e.type === type)!.position;
        expect(results.map((r) => r.position)).to.deep.equal([last('A1'), last('B1'), last('C2'), last('D0'), last('C3')]);
      });

      it('appends nothing at all when one stream is not at its expected revision, and names that stream', async () => {
        await store.append(`${s}-b`, [ev('B0'), ev('B1')]);
        const err = await store
          .appendMany!([
            { streamId: `${s}-a`, expectedRevision: 'no_stream', events: [ev('A0')] },
            { streamId: `${s}-b`, expectedRevision: 0, events: [ev('B2')] },
            { streamId: `${s}-c`, expectedRevision: 'stream_exists', events: [ev('C0')] },
          ])
          .catch((e) => e);
        expect(err).to.be.instanceOf(WrongExpectedRevisionError);
        expect(err.streamId).to.equal(`${s}-b`);
        expect(err.actual).to.equal(1);
        expect(await store.readStream(`${s}-a`)).to.deep.equal([]);
        expect(await store.readStream(`${s}-b`)).to.have.length(2);
        const missing = await store.appendMany!([{ streamId: `${s}-c`, expectedRevision: 'stream_exists', events: [ev()] }]).catch((e) => e);
        expect(missing).to.be.instanceOf(WrongExpectedRevisionError);
        expect(missing.actual).to.equal('no_stream');
        const taken = await store.appendMany!([{ streamId: `${s}-b`, expectedRevision: 'no_stream', events: [ev()] }]).catch((e) => e);
        expect(taken.actual).to.equal(1);
      });

      it('is idempotent: the same call again appends nothing and gives the same results, even after the streams moved on', async () => {
        const appends = [
          { streamId: `${s}-a`, expectedRevision: 'no_stream' as const, events: [ev('A0'), ev('A1')] },
          { streamId: `${s}-b`, expectedRevision: 'no_stream' as const, events: [ev('B0')] },
        ];
        const first = await store.appendMany!(appends);
        expect((await store.appendMany!(appends)).map(comparable)).to.deep.equal(first.map(comparable));
        await store.append(`${s}-a`, [ev('A2')]);
        expect((await store.appendMany!(appends)).map(comparable)).to.deep.equal(first.map(comparable));
        expect(await store.readStream(`${s}-a`)).to.have.length(3);
        expect(await store.readStream(`${s}-b`)).to.have.length(1);
      });

      it('refuses event ids already appended to another stream, appending nothing', async () => {
        const used = ev('Used');
        await store.append(`${s}-x`, [used]);
        const err = await store
          .appendMany!([
            { streamId: `${s}-a`, expectedRevision: 'no_stream', events: [ev('A0')] },
            { streamId: `${s}-b`, expectedRevision: 'no_stream', events: [used] },
          ])
          .catch((e) => e);
        expect(err).to.be.instanceOf(Error);
        expect(await store.readStream(`${s}-a`)).to.deep.equal([]);
        expect(await store.readStream(`${s}-b`)).to.deep.equal([]);
      });

      it('round-trips data, metadata and schema version, and takes an empty list', async () => {
        const data = { nested: { list: [1, 'two', null], flag: true }, text: 'héllo ✓' };
        await store.appendMany!([{ streamId: s, events: [{ id: randomUUID(), type: 'Rich', data, metadata: { actor: 'user:1' }, schemaVersion: 3 }] }]);
        const [e] = await store.readStream(s);
        expect(e.data).to.deep.equal(data);
        expect(e.metadata).to.deep.include({ actor: 'user:1' });
        expect(e.schemaVersion).to.equal(3);
        expect(await store.appendMany!([])).to.deep.equal([]);
      });
    });

    it('subscribes after a position', async () => {
      await store.append(s, [ev('X1'), ev('X2'), ev('X3')]);
      const all = await store.readStream(s);
      const seen: string[] = [];
      const sub = store.subscribe({ after: all[0].position, streamPrefixes: [s], onEvents: async (events) => void seen.push(...events.map((e) => e.type)) });
      await until(() => seen.length === 2);
      await sub.close();
      expect(seen).to.deep.equal(['X2', 'X3']);
    });
    sealedStoreContract(() => store);
  });
}
