import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { createGroupCommit, ItemFailure } from '../../group-commit.js';
import { createLogTail, type LogPage } from './log-tail.js';
import { categoryOf, decodeNotice, encodeNotice, mayMatch } from './commit-notice.js';
import {
  START,
  WrongExpectedRevisionError,
  comparePositions,
  readsEvent,
  type AppendOptions,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type Position,
  type ReadAllOptions,
  type RecordedEvent,
  type StreamAppend,
  type SubscribeOptions,
  type Subscription,
} from '../../ports/event-store.js';
import { LOG_HORIZON_SQL } from './log-horizon.js';

/**
 * The PostgreSQL event store (schema and `append_events` in src/migrations/001_event_store.ts).
 *
 * Global order: identity values are taken at insert time but become visible at commit, so a reader
 * that follows `global_position` alone can skip an event whose transaction commits late. Readers
 * therefore only take rows whose writing transaction is older than every transaction of this database
 * still running (`tx_id < ` the log's horizon, log-horizon.ts) and order them by `(tx_id, global_position)`:
 * no row can ever appear behind a position a reader has passed.
 */
export interface PostgresEventStoreOptions {
  connectionString: string;
  poolSize?: number;
  /** how often a subscription polls when no NOTIFY arrived (a NOTIFY can precede visibility) */
  pollIntervalMs?: number;
  /** the shortest time between two reads of one subscription (default 20 ms): commits in between share a read */
  minReadIntervalMs?: number;
  /** the shortest time between two commit notices to other processes (default 10 ms): commits in between share one */
  minNoticeIntervalMs?: number;
  /**
   * Subscriptions read the log's newest events from one shared tail (log-tail.ts) once this store
   * has this many of them (default 4: a worker's followers), each from the log itself before that.
   */
  sharedTailFrom?: number;
  /** events the shared tail keeps (default 10,000) */
  sharedTailCapacity?: number;
}

const COLUMNS =
  'global_position, tx_id::text AS tx_id, stream_id, revision, event_id, type, schema_version, data, metadata, recorded_at';

interface AppendRow {
  last_revision: string | null;
  last_tx_id: string;
  last_position: string;
  conflict: string | null;
}

interface EventRow {
  global_position: string | number;
  tx_id: string;
  stream_id: string;
  revision: string | number;
  event_id: string;
  type: string;
  schema_version: number;
  data: unknown;
  metadata: Record<string, unknown>;
  recorded_at: Date;
}

function toRecorded(row: EventRow): RecordedEvent {
  return {
    id: row.event_id,
    streamId: row.stream_id,
    revision: Number(row.revision),
    type: row.type,
    data: row.data,
    metadata: row.metadata ?? {},
    schemaVersion: row.schema_version,
    recordedAt: row.recorded_at,
    position: { commit: BigInt(row.tx_id), prepare: BigInt(row.global_position) },
  };
}

export function likePatterns(prefixes: string[]): string[] {
  return prefixes.map((p) => p.replace(/[\\%_]/g, (c) => `\\${c}`) + '%');
}

/**
 * A statement prepared once per connection under `name` and planned from then on from the plan cache:
 * planning the set-based append and the reads cost the database a quarter of its time per statement.
 * The plans cannot go stale in a way that matters: this store's sessions only take index paths.
 */
const prepared =
  (name: string, text: string) =>
  (values: unknown[]): pg.QueryConfig => ({ name, text, values });

export function createPostgresEventStore(options: PostgresEventStoreOptions): EventStore {
  // Everything this pool runs is a key lookup or a read in commit order (the events_commit_order
  // index, filtered by stream prefix, LIMIT n). The planner cannot estimate `stream_id LIKE ANY(...)`
  // and, on a large log, chose a seq scan and sort of every event after the position: 5 s per
  // 2,000-event read at 3.5M events, against 20 ms walking the index in order. JIT off: a plan priced
  // out this way costs far above jit_above_cost, and compiling it takes longer than running it.
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.poolSize ?? 8,
    options: '-c enable_seqscan=off -c enable_bitmapscan=off -c jit=off',
  });
  // A client that loses its server must not crash the process, idle (the pool's 'error') or checked
  // out between two statements of an append (the pool listens to idle clients only: a PostgreSQL
  // restart ended the API process through an unhandled 'error' of an appending client). Its query
  // fails instead, and the pool discards it on release.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const pollIntervalMs = options.pollIntervalMs ?? 250;
  const minReadIntervalMs = options.minReadIntervalMs ?? 20;
  const subscriptions = new Set<Subscription>();
  const sharedTailFrom = options.sharedTailFrom ?? 4;
  const tail = createLogTail({
    capacity: options.sharedTailCapacity,
    read: (after, limit) => readAllWithHead({ after, limit }),
  });

  // NOTIFY after commit, not inside the append (migration 013): a NOTIFY in the appending transaction
  // holds a database-wide lock through its WAL flush and so serialises all appends. Subscribers of
  // this store are woken at once; other processes' by the notice, which names the stream categories
  // (see commit-notice.ts) so that nobody reads for commits to streams they do not follow. Coalesced:
  // at most one in flight, at most one per minNoticeIntervalMs (a busy process otherwise sent one per
  // append, a tenth of a webhook delivery's round trips), and what commits meanwhile goes out together
  // in the next.
  const minNoticeIntervalMs = options.minNoticeIntervalMs ?? 10;
  let noticeTimer: NodeJS.Timeout | undefined;
  let endNoticePause: (() => void) | undefined;
  let notifying: Promise<void> | null = null;
  let unsent = new Set<string>();
  const instance = randomUUID();
  function notifyCommitted(streamIds: string[]): void {
    const categories = [...new Set(streamIds.map(categoryOf))];
    wakers.forEach((wake) => wake(categories));
    categories.forEach((c) => unsent.add(c));
    sendNotice();
  }
  function sendNotice(): void {
    if (notifying || unsent.size === 0) return;
    const payload = encodeNotice(instance, unsent);
    unsent = new Set();
    notifying = pool
      .query("SELECT pg_notify('events', $1)", [payload])
      .then(
        () => undefined,
        () => undefined, // readers poll as well: a lost notification only delays them
      )
      .then(
        () =>
          new Promise<void>((resolve) => {
            endNoticePause = resolve;
            noticeTimer = setTimeout(resolve, minNoticeIntervalMs);
          }),
      )
      .finally(() => {
        notifying = null;
        sendNotice(); // commits made meanwhile go out together in the next
      });
  }

  async function appendOne({ streamId, events, expectedRevision, keys }: StreamAppend): Promise<AppendResult> {
    const args: unknown[] = [
      streamId,
      String(expectedRevision ?? 'any'),
      events.map((e) => e.id),
      events.map((e) => e.type),
      events.map((e) => e.schemaVersion ?? 1),
      events.map((e) => JSON.stringify(e.data ?? null)),
      events.map((e) => JSON.stringify(e.metadata ?? {})),
    ];
    if (keys?.length) args.push(JSON.stringify(keys.map(keyJson)));
    for (let attempt = 0; ; attempt++) {
      try {
        const { rows } = await pool.query(keys?.length ? APPEND_ONE_KEYED(args) : APPEND_ONE(args));
        const result = appendResultOf(streamId, expectedRevision, rows[0]);
        if (result instanceof ItemFailure) throw result.error;
        notifyCommitted([streamId]);
        return result;
      } catch (err) {
        const e = err as { code?: string; constraint?: string };
        // The same events raced in from a concurrent retry: the winner's result is ours too.
        if (e.code === '23505' && e.constraint === 'events_event_id_key' && attempt === 0) continue;
        throw err;
      }
    }
  }

  function appendResultOf(streamId: string, expected: ExpectedRevision | undefined, row: AppendRow): AppendResult | ItemFailure {
    if (row.conflict !== null) {
      return new ItemFailure(
        new WrongExpectedRevisionError(streamId, expected ?? 'any', row.conflict === 'no_stream' ? 'no_stream' : Number(row.conflict)),
      );
    }
    return { nextRevision: Number(row.last_revision), position: { commit: BigInt(row.last_tx_id), prepare: BigInt(row.last_position) } };
  }

  // Appends from concurrent callers (fifty API requests, sixteen send workers) share one statement,
  // one transaction and one WAL flush, each stream still checked against its own expected revision
  // and answered on its own: a conflict fails that append alone. Streams are taken in stream-id order,
  // so two batches (here or in another process) never wait on each other's locks in a cycle. A batch
  // whose statement fails (a retry racing its original, event ids of another stream, a deadlock with
  // another process's batch) has written nothing, and its appends are made one by one, each with its
  // own answer; should the read of refusing revisions fail after the statement committed, the appends
  // made one by one find their events already in the log and answer as the replays they are.
  const concurrentAppends = createGroupCommit<StreamAppend, AppendResult>(
    async (items) => {
      if (items.length === 1) return [await appendOne(items[0])];
      const order = items.map((_, i) => i).sort((a, b) => (items[a].streamId < items[b].streamId ? -1 : items[a].streamId > items[b].streamId ? 1 : a - b));
      const sorted = order.map((i) => items[i]);
      let rows: AppendRow[];
      try {
        const payload = appendPayload(sorted);
        const distinct = new Set(sorted.map((a) => a.streamId)).size === sorted.length;
        rows = (distinct ? await appendNew(pool, payload) : undefined) ?? (await pool.query<AppendRow>(APPEND_MANY([payload]))).rows;
        await readConflictingRevisions(pool, sorted, rows);
      } catch {
        return Promise.all(items.map((item) => appendOne(item).catch((err: unknown) => new ItemFailure(err))));
      }
      const results: (AppendResult | ItemFailure)[] = new Array(items.length);
      order.forEach((i, k) => (results[i] = appendResultOf(items[i].streamId, items[i].expectedRevision, rows[k])));
      notifyCommitted(items.filter((_, i) => !(results[i] instanceof ItemFailure)).map((a) => a.streamId));
      return results;
    },
    { maxBatch: 200 },
  );

  /**
   * APPEND_MANY_NEW, when each stream appears once in `payload`: a stream not at its expected revision
   * comes back with conflict 'unknown' and the others are written. Undefined (nothing written) when an
   * event id is already in the log: only append_events' per-stream path answers a replay.
   */
  async function appendNew(client: pg.Pool | pg.PoolClient, payload: string): Promise<AppendRow[] | undefined> {
    const { rows } = await client.query(APPEND_MANY_NEW([payload]));
    if (rows[0].replay) return undefined;
    return rows.map((r) => ({ ...r, conflict: r.last_revision === null ? 'unknown' : null }));
  }

  const STREAM_REVISIONS = prepared('es_stream_revisions', 'SELECT stream_id, revision::int AS revision FROM streams WHERE stream_id = ANY($1::text[])');

  /** The current revision of each of the streams that exist, as `client` sees them now. */
  async function revisionsOf(client: pg.Pool | pg.PoolClient, streamIds: string[]): Promise<Map<string, number>> {
    if (streamIds.length === 0) return new Map();
    const { rows } = await client.query<{ stream_id: string; revision: number }>(STREAM_REVISIONS([streamIds]));
    return new Map(rows.map((r) => [r.stream_id, r.revision]));
  }

  /** Fills in the revision that refused each 'unknown' conflict, as committed now. */
  async function readConflictingRevisions(client: pg.Pool | pg.PoolClient, appends: StreamAppend[], rows: AppendRow[]): Promise<void> {
    const refused = appends.filter((_, k) => rows[k].conflict === 'unknown').map((a) => a.streamId);
    if (refused.length === 0) return;
    const revisions = await revisionsOf(client, refused);
    appends.forEach((a, k) => {
      const revision = revisions.get(a.streamId);
      if (rows[k].conflict === 'unknown') rows[k].conflict = revision === undefined ? 'no_stream' : String(revision);
    });
  }

  function append(streamId: string, events: NewEvent[], { expectedRevision = 'any', keys }: AppendOptions = {}): Promise<AppendResult> {
    return concurrentAppends.add({ streamId, events, expectedRevision, keys });
  }

  function appendPayload(items: StreamAppend[]): string {
    return JSON.stringify(
      items.map((a) => ({
        s: a.streamId,
        x: String(a.expectedRevision ?? 'any'),
        ids: a.events.map((e) => e.id),
        types: a.events.map((e) => e.type),
        versions: a.events.map((e) => e.schemaVersion ?? 1),
        data: a.events.map((e) => e.data ?? null),
        meta: a.events.map((e) => e.metadata ?? {}),
        ...(a.keys?.length ? { k: a.keys.map(keyJson) } : {}),
      })),
    );
  }

  const keyJson = (k: NonNullable<StreamAppend['keys']>[number]) => ({ id: k.id, a: k.accountId, p: k.person, s: k.scope, w: k.wrapped.toString('base64') });

  // append_events once per stream, inside one statement and one transaction: all streams or none.
  // The general path: replays of event ids already appended, and a stream named twice in one call.
  const APPEND_ONE = prepared('es_append_one', 'SELECT * FROM append_events($1, $2, $3::uuid[], $4::text[], $5::int[], $6::jsonb[], $7::jsonb[])');

  // The data keys an append carries (AppendOptions.keys: `k` in a payload) go into data_keys in the
  // statement that appends the events, and only when they are appended: a refused append stores no key.
  const INSERT_KEYS = `INSERT INTO data_keys (id, account_id, person, scope, wrapped)
      SELECT (k->>'id')::uuid, k->>'a', k->>'p', k->>'s', decode(k->>'w', 'base64')`;
  const APPEND_ONE_KEYED = prepared('es_append_one_keyed', `
    WITH r AS (SELECT * FROM append_events($1, $2, $3::uuid[], $4::text[], $5::int[], $6::jsonb[], $7::jsonb[])),
    keyed AS (
      ${INSERT_KEYS}
      FROM jsonb_array_elements($8::jsonb) k WHERE (SELECT conflict FROM r) IS NULL
      ON CONFLICT (id) DO NOTHING
    )
    SELECT * FROM r`);

  const APPEND_MANY = prepared('es_append_many', `
    WITH r AS (
    SELECT b.i, b.a, r.last_revision, r.last_tx_id, r.last_position, r.conflict
    FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS b (a, i)
    CROSS JOIN LATERAL append_events(
      b.a->>'s', b.a->>'x',
      ARRAY(SELECT v::uuid FROM jsonb_array_elements_text(b.a->'ids') WITH ORDINALITY e (v, o) ORDER BY o),
      ARRAY(SELECT v FROM jsonb_array_elements_text(b.a->'types') WITH ORDINALITY e (v, o) ORDER BY o),
      ARRAY(SELECT v::int FROM jsonb_array_elements_text(b.a->'versions') WITH ORDINALITY e (v, o) ORDER BY o),
      ARRAY(SELECT v FROM jsonb_array_elements(b.a->'data') WITH ORDINALITY e (v, o) ORDER BY o),
      ARRAY(SELECT v FROM jsonb_array_elements(b.a->'meta') WITH ORDINALITY e (v, o) ORDER BY o)) r
    ),
    keyed AS (
      ${INSERT_KEYS}
      FROM r CROSS JOIN LATERAL jsonb_array_elements(COALESCE(r.a->'k', '[]')) k WHERE r.conflict IS NULL
      ON CONFLICT (id) DO NOTHING
    )
    SELECT last_revision, last_tx_id, last_position, conflict FROM r ORDER BY i`);

  // The common case (new event ids, each stream once) as set operations: one statement per table
  // instead of append_events' four per stream, which made a 500-contact import spend most of its time
  // in PL/pgSQL. It changes nothing when any event id is already in the log (\`replay\` comes back
  // true and the general path decides); a stream not at its expected revision comes back without a
  // revision, and the caller rolls the whole call back.
  const APPEND_MANY_NEW = prepared('es_append_new', `
    WITH b AS (
      SELECT t.i, t.a->>'s' AS s, t.a->>'x' AS x, jsonb_array_length(t.a->'ids') AS n, t.a
      FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS t (a, i)
    ),
    fresh AS (
      SELECT NOT EXISTS (
        -- the ids as an array, looked up one by one: as IN (subquery) the planner guessed 10,000 of
        -- them and walked the whole event id index of any log it took for smaller than that
        SELECT 1 FROM events WHERE event_id = ANY (ARRAY(SELECT jsonb_array_elements_text(b.a->'ids')::uuid FROM b))
      ) AS yes
    ),
    created AS (
      INSERT INTO streams (stream_id, revision)
      SELECT s, n - 1 FROM b WHERE x = 'no_stream' AND (SELECT yes FROM fresh) ORDER BY s
      ON CONFLICT DO NOTHING
      RETURNING stream_id, revision
    ),
    unchecked AS (
      INSERT INTO streams AS st (stream_id, revision)
      SELECT s, n - 1 FROM b WHERE x = 'any' AND (SELECT yes FROM fresh) ORDER BY s
      ON CONFLICT (stream_id) DO UPDATE SET revision = st.revision + excluded.revision + 1
      RETURNING stream_id, revision
    ),
    moved AS (
      -- b in its payload order, which concurrent appends sort by stream id, so that the nested loop
      -- over the stream key the planner takes here locks rows in that order. A plan that does not is
      -- no error: a deadlock fails one batch, and its appends are retried one by one.
      UPDATE streams st SET revision = st.revision + b.n
      FROM (SELECT * FROM b ORDER BY b.i) b
      WHERE (SELECT yes FROM fresh) AND st.stream_id = b.s
        AND (b.x = 'stream_exists' OR (b.x ~ '^[0-9]+$' AND st.revision = b.x::bigint))
      RETURNING st.stream_id, st.revision
    ),
    settled AS (SELECT * FROM created UNION ALL SELECT * FROM unchecked UNION ALL SELECT * FROM moved),
    appended AS (
      INSERT INTO events (stream_id, revision, event_id, type, schema_version, data, metadata)
      SELECT b.s, st.revision - b.n + 1 + e.o, (b.a->'ids'->>e.o)::uuid, b.a->'types'->>e.o,
             (b.a->'versions'->>e.o)::int, b.a->'data'->e.o, b.a->'meta'->e.o
      FROM b JOIN settled st ON st.stream_id = b.s
      CROSS JOIN LATERAL generate_series(0, b.n - 1) AS e (o)
      ORDER BY b.i, e.o
      RETURNING stream_id, global_position
    ),
    last AS (SELECT stream_id, max(global_position) AS global_position FROM appended GROUP BY stream_id),
    keyed AS (
      ${INSERT_KEYS}
      FROM b JOIN settled st ON st.stream_id = b.s CROSS JOIN LATERAL jsonb_array_elements(COALESCE(b.a->'k', '[]')) k
      ON CONFLICT (id) DO NOTHING
    )
    SELECT st.revision AS last_revision, pg_current_xact_id()::text AS last_tx_id, l.global_position AS last_position,
           NOT (SELECT yes FROM fresh) AS replay
    FROM b LEFT JOIN settled st ON st.stream_id = b.s LEFT JOIN last l ON l.stream_id = b.s
    ORDER BY b.i`);

  async function appendMany(appends: StreamAppend[]): Promise<AppendResult[]> {
    if (appends.length === 0) return [];
    const payload = appendPayload(appends);
    const distinct = new Set(appends.map((a) => a.streamId)).size === appends.length;
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const rows = (distinct ? await appendNew(client, payload) : undefined) ?? (await client.query<AppendRow>(APPEND_MANY([payload]))).rows;
      const conflict = rows.findIndex((r) => r.conflict !== null);
      if (conflict >= 0) {
        await client.query('ROLLBACK');
        // Read after the rollback: the revision that refused us, as committed now.
        rows[conflict].conflict = 'unknown';
        await readConflictingRevisions(client, appends, rows);
        const a = appends[conflict];
        throw (appendResultOf(a.streamId, a.expectedRevision, rows[conflict]) as ItemFailure).error;
      }
      await client.query('COMMIT');
      notifyCommitted(appends.map((a) => a.streamId));
      return rows.map((r) => ({ nextRevision: Number(r.last_revision), position: { commit: BigInt(r.last_tx_id), prepare: BigInt(r.last_position) } }));
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }

  const READ_STREAM = prepared('es_read_stream', `SELECT ${COLUMNS} FROM events WHERE stream_id = $1 AND revision >= $2 ORDER BY revision`);
  const READ_STREAMS = prepared(
    'es_read_streams',
    `SELECT r.i, ${COLUMNS}
     FROM unnest($1::text[], $2::bigint[]) WITH ORDINALITY AS r (s, f, i)
     JOIN events ON events.stream_id = r.s AND events.revision >= r.f
     ORDER BY r.i, events.revision`,
  );

  // Concurrent stream reads share one statement too (the send worker and the ingest read one stream
  // per message). A read joins the batch after the one in flight, so it still sees every append that
  // was answered before it was asked.
  const concurrentReads = createGroupCommit<{ streamId: string; fromRevision: number }, RecordedEvent[]>(
    async (items) => {
      if (items.length === 1) {
        const { rows } = await pool.query<EventRow>(READ_STREAM([items[0].streamId, items[0].fromRevision]));
        return [rows.map(toRecorded)];
      }
      const { rows } = await pool.query<EventRow & { i: string }>(READ_STREAMS([items.map((r) => r.streamId), items.map((r) => r.fromRevision)]));
      const results: RecordedEvent[][] = items.map(() => []);
      for (const row of rows) results[Number(row.i) - 1].push(toRecorded(row));
      return results;
    },
    { maxBatch: 200 },
  );

  function readStream(streamId: string, opts: { fromRevision?: number } = {}): Promise<RecordedEvent[]> {
    return concurrentReads.add({ streamId, fromRevision: opts.fromRevision ?? 0 });
  }

  // One statement, so the head and the events are read in the same snapshot. The head row is always
  // there (unless the log is empty); batch columns are NULL on it when nothing matched.
  const READ_ALL = prepared('es_read_all', `
    WITH horizon AS MATERIALIZED (SELECT ${LOG_HORIZON_SQL} AS h),
    head AS (
      SELECT tx_id, global_position FROM events
      WHERE tx_id < (SELECT h FROM horizon)
      ORDER BY tx_id DESC, global_position DESC
      LIMIT 1
    ),
    batch AS (
      -- events.tx_id, not tx_id: a bare name would sort by the text alias in COLUMNS, so '1000'
      -- would come before '999' (and a full batch would skip events), and no index could serve it.
      SELECT ${COLUMNS} FROM events
      WHERE events.tx_id < (SELECT h FROM horizon)
        AND (events.tx_id, events.global_position) > ($1::xid8, $2::bigint)
        AND ($4::text[] IS NULL OR stream_id LIKE ANY ($4::text[]))
        AND ($5::text[] IS NULL OR type = ANY ($5::text[]))
      ORDER BY events.tx_id, events.global_position
      LIMIT $3
    )
    SELECT batch.*, head.tx_id::text AS head_tx, head.global_position AS head_position,
      EXISTS (SELECT 1 FROM events WHERE events.tx_id >= (SELECT h FROM horizon)) AS held
    FROM head LEFT JOIN batch ON true
    ORDER BY batch.tx_id::xid8, batch.global_position`);

  async function readAll(opts: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    return (await readAllWithHead(opts)).events;
  }

  /**
   * readAll, plus `head`: the last position visible to the same snapshot (null for an empty log). When
   * fewer than `limit` events come back, every matching event up to `head` is among them and nothing
   * can later appear at or before `head`, so a filtered reader may move on to `head`. Without that, a
   * subscription to rare streams (suppressions) would rescan every event since its last match on each
   * wake-up, and the cost of one append would grow with the log.
   */
  async function readAllWithHead(opts: ReadAllOptions = {}): Promise<LogPage> {
    const after = opts.after ?? START;
    const { rows } = await pool.query<EventRow & { head_tx: string; head_position: string; held: boolean }>(
      READ_ALL([
        after.commit.toString(),
        after.prepare.toString(),
        opts.limit ?? 1000,
        opts.streamPrefixes?.length ? likePatterns(opts.streamPrefixes) : null,
        opts.eventTypes?.length ? opts.eventTypes : null,
      ]),
    );
    const events = rows.filter((r) => r.event_id !== null);
    return {
      events: events.map(toRecorded),
      head: rows.length ? { commit: BigInt(rows[0].head_tx), prepare: BigInt(rows[0].head_position) } : null,
      held: rows.length > 0 && rows[0].held,
    };
  }

  // One LISTEN connection per store, shared by all its subscriptions.
  const wakers = new Set<(categories?: string[]) => void>();
  let listener: Promise<pg.Client | undefined> | undefined;
  function ensureListener() {
    listener ??= (async () => {
      const client = new pg.Client({ connectionString: options.connectionString });
      client.on('error', () => {
        listener = undefined;
      });
      client.on('notification', (msg) => {
        const notice = decodeNotice(msg.payload ?? '');
        // our own commits woke our subscribers when they were made
        if (notice.instance !== instance) wakers.forEach((wake) => wake(notice.categories));
      });
      try {
        await client.connect();
        await client.query('LISTEN events');
        return client;
      } catch {
        // Without LISTEN the poll still delivers everything, only later; retried on the next loop.
        listener = undefined;
        await client.end().catch(() => {});
        return undefined;
      }
    })();
    return listener;
  }

  function subscribe(opts: SubscribeOptions): Subscription {
    let closed = false;
    let position: Position = opts.after ?? START;
    const limit = opts.limit ?? 500;
    const matches = readsEvent(opts);
    /** From the shared tail while this store has enough subscriptions and this one is within it, else from the log. */
    const read = async () =>
      (subscriptions.size >= sharedTailFrom ? await tail.read(position, limit, matches) : null) ??
      { ...(await readAllWithHead({ ...opts, after: position, limit })), complete: true };
    // A commit that lands while a read is running is kept, not lost, so the next read follows at once
    // instead of after the poll interval.
    let pending = false;
    let wake: (() => void) | undefined;
    let stop: (() => void) | undefined;
    const waker = (categories?: string[]) => {
      if (!mayMatch(opts.streamPrefixes, categories)) return;
      pending = true;
      wake?.();
    };
    wakers.add(waker);

    /** Sleeps `ms`; a commit cuts it short when `wakeable`, close() always does. */
    const sleep = (ms: number, wakeable: boolean) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(done, ms);
        function done() {
          clearTimeout(timer);
          wake = stop = undefined;
          resolve();
        }
        stop = done;
        if (wakeable) wake = done;
      });

    const loop = (async () => {
      let lastRead = 0;
      // how long to wait before looking again while commits are held back, doubled each time nothing came
      let heldWaitMs = 0;
      while (!closed) {
        await ensureListener();
        let held: boolean;
        try {
          lastRead = Date.now();
          const page = await read();
          const { events: batch, head, complete } = page;
          held = page.held;
          if (batch.length > 0) {
            heldWaitMs = 0;
            await opts.onEvents(batch);
            position = batch[batch.length - 1].position;
            if (batch.length === limit) continue;
          }
          // nothing else matches up to the head: later reads start there instead of rescanning
          if (head && comparePositions(head, position) > 0) position = head;
          // the tail is still reading a backlog
          if (!complete) continue;
        } catch (err) {
          closed = true;
          opts.onError?.(err);
          break;
        }
        // A commit's notice can come while an older transaction still runs (a read model's batch, a
        // cap reservation): the read that follows cannot take it yet, and no other notice may come to
        // say when it can. So a reader that saw commits held back looks again shortly (after
        // minReadIntervalMs, then twice that, ..., up to the poll interval) instead of at its next
        // poll: the last send before a quiet moment could otherwise wait the whole poll interval.
        heldWaitMs = held ? Math.min(pollIntervalMs, heldWaitMs ? heldWaitMs * 2 : minReadIntervalMs) : 0;
        if (!closed && !pending) await sleep(held ? heldWaitMs : pollIntervalMs, true);
        pending = false;
        // Under load every append wakes every subscriber: commits within minReadIntervalMs of the last
        // read are taken by one read, not one read each (that was most of the database round trips).
        const gap = lastRead + minReadIntervalMs - Date.now();
        if (!closed && gap > 0) await sleep(gap, false);
      }
    })();

    const subscription: Subscription = {
      async close() {
        closed = true;
        stop?.();
        await loop;
        wakers.delete(waker);
        subscriptions.delete(subscription);
      },
    };
    subscriptions.add(subscription);
    return subscription;
  }

  return {
    append,
    appendMany,
    streamRevisions: (streamIds: string[]) => revisionsOf(pool, streamIds),
    readStream,
    readAll,
    subscribe,
    async close() {
      await Promise.all([...subscriptions].map((s) => s.close()));
      const client = await listener;
      listener = undefined;
      await client?.end().catch(() => {});
      unsent.clear();
      clearTimeout(noticeTimer);
      endNoticePause?.();
      await notifying;
      await pool.end();
    },
  };
}
