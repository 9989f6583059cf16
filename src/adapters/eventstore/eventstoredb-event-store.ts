import {
  ANY,
  EventStoreDBClient,
  NO_STREAM,
  START as ESDB_START,
  STREAM_EXISTS,
  StreamNotFoundError,
  WrongExpectedVersionError,
  excludeSystemEvents,
  jsonEvent,
  streamNameFilter,
  type AllStreamResolvedEvent,
  type AppendExpectedRevision,
  type ResolvedEvent,
} from '@eventstore/db-client';
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
  type SubscribeOptions,
  type Subscription,
} from '../../ports/event-store.js';

/**
 * The EventStoreDB adapter of the event store port (selected by EVENTSTORE_URL). Event ids are our
 * UUIDs, so EventStoreDB's own idempotence applies; revisions map to its stream revisions, positions
 * to its (commit, prepare) log positions. Verified against the port's contract suite only where an
 * EventStoreDB server was reachable (see docs/architecture.md, "Where each adapter was verified").
 *
 * No appendMany: EventStoreDB commits one stream at a time. A command that writes several streams
 * (executeTogether) appends them one after another here, the one that makes the others reachable
 * last, and a rerun of the same command completes what a stop in between left out: its events carry
 * the command id, and their deterministic ids make a repeated append a no-op.
 */
function toExpected(expected: ExpectedRevision): AppendExpectedRevision {
  if (expected === 'any') return ANY;
  if (expected === 'no_stream') return NO_STREAM;
  if (expected === 'stream_exists') return STREAM_EXISTS;
  return BigInt(expected);
}

function toRecorded(resolved: ResolvedEvent | AllStreamResolvedEvent): RecordedEvent | null {
  const e = resolved.event;
  if (!e || e.streamId.startsWith('$') || e.type.startsWith('$') || !e.position) return null;
  const meta = (e.metadata ?? {}) as Record<string, unknown>;
  const { schemaVersion, ...metadata } = meta as { schemaVersion?: number };
  return {
    id: e.id,
    streamId: e.streamId,
    revision: Number(e.revision),
    type: e.type,
    data: e.data,
    metadata,
    schemaVersion: typeof schemaVersion === 'number' ? schemaVersion : 1,
    recordedAt: e.created instanceof Date ? e.created : new Date(Number(e.created) / 10_000),
    position: { commit: e.position.commit, prepare: e.position.prepare },
  };
}

// The server filters on stream names or on event types, not both: types are filtered here.
function filterFor(prefixes: string[] | undefined) {
  return prefixes?.length ? streamNameFilter({ prefixes }) : excludeSystemEvents();
}

export function createEventStoreDbEventStore(options: { connectionString: string }): EventStore {
  const client = EventStoreDBClient.connectionString(options.connectionString);
  const subscriptions = new Set<Subscription>();

  async function readStream(streamId: string, opts: { fromRevision?: number } = {}): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    try {
      for await (const resolved of client.readStream(streamId, { fromRevision: opts.fromRevision ? BigInt(opts.fromRevision) : ESDB_START })) {
        const e = toRecorded(resolved);
        if (e) out.push(e);
      }
    } catch (err) {
      if (err instanceof StreamNotFoundError) return [];
      throw err;
    }
    return out;
  }

  /** The result an earlier append of these same events had, if they are in the stream. */
  async function previousAppend(streamId: string, events: NewEvent[]): Promise<AppendResult | null> {
    const ids = new Set(events.map((e) => e.id));
    const found = (await readStream(streamId)).filter((e) => ids.has(e.id));
    if (found.length !== events.length) return null;
    const last = found[found.length - 1];
    return { nextRevision: last.revision, position: last.position };
  }

  async function append(
    streamId: string,
    events: NewEvent[],
    { expectedRevision = 'any', keys }: AppendOptions = {},
  ): Promise<AppendResult> {
    // The data keys live in PostgreSQL: the sealing store stores them itself before appending here.
    if (keys?.length) throw new Error('EventStoreDB cannot store data keys with events');
    const data = events.map((e) =>
      jsonEvent({ id: e.id, type: e.type, data: (e.data ?? null) as never, metadata: { ...e.metadata, schemaVersion: e.schemaVersion ?? 1 } }),
    );
    try {
      const result = await client.appendToStream(streamId, data, { expectedRevision: toExpected(expectedRevision) });
      // An idempotent re-append answers with the stream's current revision; report the original result.
      const previous = result.position ? null : await previousAppend(streamId, events);
      if (previous) return previous;
      return {
        nextRevision: Number(result.nextExpectedRevision),
        position: { commit: result.position!.commit, prepare: result.position!.prepare },
      };
    } catch (err) {
      if (err instanceof WrongExpectedVersionError) {
        const previous = await previousAppend(streamId, events);
        if (previous) return previous;
        const actual = typeof err.actualVersion === 'bigint' ? Number(err.actualVersion) : 'no_stream';
        throw new WrongExpectedRevisionError(streamId, expectedRevision, actual);
      }
      throw err;
    }
  }

  async function readAll(opts: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const after = opts.after ?? START;
    const limit = opts.limit ?? 1000;
    const isStart = after.commit === 0n && after.prepare === 0n;
    const out: RecordedEvent[] = [];
    const reads = readsEvent(opts);
    // readAll has no server-side filter in this client: read in pages and filter here.
    let from: Position | typeof ESDB_START = isStart ? ESDB_START : after;
    for (;;) {
      let seen = 0;
      let lastPos: Position | undefined;
      for await (const resolved of client.readAll({ fromPosition: from, maxCount: limit + 1 })) {
        seen++;
        const pos = resolved.event?.position;
        if (pos) lastPos = { commit: pos.commit, prepare: pos.prepare };
        const e = toRecorded(resolved);
        if (!e || comparePositions(e.position, after) <= 0) continue;
        if (!reads(e)) continue;
        out.push(e);
        if (out.length >= limit) return out;
      }
      if (seen <= 1 || !lastPos) return out;
      from = lastPos;
    }
  }

  function subscribe(opts: SubscribeOptions): Subscription {
    const after = opts.after ?? START;
    const isStart = after.commit === 0n && after.prepare === 0n;
    const stream = client.subscribeToAll({ fromPosition: isStart ? ESDB_START : after, filter: filterFor(opts.streamPrefixes) });
    // the server filters by stream prefix; the types are ours to filter
    const ofTypes = readsEvent({ eventTypes: opts.eventTypes });
    let closed = false;
    const loop = (async () => {
      try {
        const batchSize = opts.limit ?? 500;
        let batch: RecordedEvent[] = [];
        for await (const resolved of stream) {
          if (closed) break;
          const e = toRecorded(resolved);
          if (!e || comparePositions(e.position, after) <= 0 || !ofTypes(e)) continue;
          batch.push(e);
          // Deliver at once when nothing else is buffered, else in batches.
          if (batch.length >= batchSize || stream.readableLength === 0) {
            await opts.onEvents(batch);
            batch = [];
          }
        }
      } catch (err) {
        if (!closed) opts.onError?.(err);
      }
    })();
    const subscription: Subscription = {
      async close() {
        closed = true;
        await stream.unsubscribe().catch(() => {});
        await loop;
        subscriptions.delete(subscription);
      },
    };
    subscriptions.add(subscription);
    return subscription;
  }

  return {
    append,
    readStream,
    readAll,
    subscribe,
    async close() {
      await Promise.all([...subscriptions].map((s) => s.close()));
      await client.dispose();
    },
  };
}
