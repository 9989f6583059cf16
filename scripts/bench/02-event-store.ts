import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createPostgresEventStore } from '../../src/adapters/eventstore/postgres-event-store.js';
import { createTestDatabase } from '../../test/support/db.js';
import { measureRates, type BenchModule } from './lib.js';

const WRITERS = 16;
/** streams each writer rotates through, so appends land on existing streams with real revisions */
const STREAMS_PER_WRITER = 50;

/**
 * Issue 2: single-event appends from 16 concurrent writers, each with the exact expected revision,
 * next to plain single-row INSERTs of the same row into a table of the same shape (identity key,
 * unique event id, unique (stream, revision), jsonb data and metadata) from 16 writers on a pool of
 * the same size. The gap is what the append function adds: the stream row's revision check and
 * advance, the tx_id column and the append-only trigger.
 */
const bench: BenchModule = {
  name: 'event store appends',
  async run() {
    const t = await createTestDatabase();
    const store = createPostgresEventStore({ connectionString: t.url, poolSize: WRITERS });
    const plain = new pg.Pool({ connectionString: t.url, max: WRITERS });
    // pg-pool's end() resolves before its clients' sockets have closed, and dropping the database
    // terminates them: an idle client's error must not crash the bench.
    plain.on('error', () => {});
    try {
      await plain.query(`CREATE TABLE plain_events (
        global_position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        stream_id text NOT NULL, revision bigint NOT NULL, event_id uuid NOT NULL UNIQUE, type text NOT NULL,
        data jsonb NOT NULL, metadata jsonb NOT NULL, recorded_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (stream_id, revision))`);
      const data = { to: 'someone@example.com', subject: 'Your receipt', apiKeyId: 'k1', accountId: 'a1' };
      const metadata = { actor: 'bench', correlationId: randomUUID() };

      const streams = WRITERS * STREAMS_PER_WRITER;
      const { append: appendRate, insert: insertRate } = await measureRates(
        {
          append: inStreamOrder(streams, (s, revision) =>
            store.append(`bench-${s}`, [{ id: randomUUID(), type: 'EmailQueued', data, metadata }], {
              expectedRevision: revision === 0 ? 'no_stream' : revision - 1,
            }),
          ),
          insert: inStreamOrder(streams, (s, revision) =>
            plain.query('INSERT INTO plain_events (stream_id, revision, event_id, type, data, metadata) VALUES ($1, $2, $3, $4, $5, $6)', [
              `bench-${s}`,
              revision,
              randomUUID(),
              'EmailQueued',
              data,
              metadata,
            ]),
          ),
        },
        { concurrency: WRITERS },
      );

      return [
        {
          name: `single-event appends, ${WRITERS} writers, exact expected revision`,
          value: appendRate,
          unit: 'events/s',
          baseline: { name: `plain single-row INSERTs, ${WRITERS} writers`, value: insertRate },
          aim: '≥ 0.5× baseline',
        },
      ];
    } finally {
      await plain.end();
      await store.close();
      await t.drop();
    }
  },
};
export default bench;

/**
 * Spreads operations over `streams` streams round-robin, handing each its next revision (0-based).
 * Two operations on one stream run one after the other, so a stalled write can never make the next
 * one conflict: every measured append succeeds at its exact revision. Its own counter, not
 * measureRate's index, which starts again at 0 after the warm-up.
 */
function inStreamOrder(streams: number, write: (stream: number, revision: number) => Promise<unknown>): () => Promise<unknown> {
  const tails = new Map<number, Promise<unknown>>();
  let next = 0;
  return () => {
    const i = next++;
    const s = i % streams;
    const revision = Math.floor(i / streams);
    const done = (tails.get(s) ?? Promise.resolve()).then(() => write(s, revision));
    tails.set(s, done);
    return done;
  };
}
