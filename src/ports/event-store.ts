import type { KeySlot, WrappedKey } from './key-store.js';

/**
 * The event store port. Two adapters implement it (PostgreSQL, EventStoreDB) and one contract
 * suite (test/adapters/eventstore/contract.ts) runs against both.
 */

/** A global, commit-ordered position. PostgreSQL: (tx_id, global_position); EventStoreDB: (commit, prepare). */
export interface Position {
  commit: bigint;
  prepare: bigint;
}

export const START: Position = { commit: 0n, prepare: 0n };

export function comparePositions(a: Position, b: Position): number {
  if (a.commit !== b.commit) return a.commit < b.commit ? -1 : 1;
  if (a.prepare !== b.prepare) return a.prepare < b.prepare ? -1 : 1;
  return 0;
}

/** The later of two positions, either possibly absent: what a command that appended to many streams waits for. */
export const laterPosition = (a: Position | undefined, b: Position | undefined): Position | undefined => (!a || (b && comparePositions(b, a) > 0) ? b : a);

/** The index of the first of `items` (in log order) past `after`; `items.length` when none is. */
export function indexAfter(items: readonly { position: Position }[], after: Position): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (comparePositions(items[mid].position, after) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** `any`: no check; `no_stream`: must not exist; `stream_exists`: must exist; a number: the exact current revision (0-based). */
export type ExpectedRevision = 'any' | 'no_stream' | 'stream_exists' | number;

export interface EventMetadata {
  correlationId?: string;
  causationId?: string;
  /** api key id, user id, or a system actor such as `system:sns` */
  actor?: string;
  [key: string]: unknown;
}

export interface NewEvent<T = unknown> {
  /** A UUID. Deterministic for retried commands, so a retried append is a no-op. */
  id: string;
  type: string;
  data: T;
  metadata?: EventMetadata;
  schemaVersion?: number;
}

export interface RecordedEvent<T = any> {
  id: string;
  streamId: string;
  /** 0-based, gapless within a stream */
  revision: number;
  type: string;
  data: T;
  metadata: EventMetadata;
  schemaVersion: number;
  recordedAt: Date;
  position: Position;
}

export interface AppendResult {
  /** revision of the last event now in the stream */
  nextRevision: number;
  /** position of the last appended event */
  position: Position;
}

export class WrongExpectedRevisionError extends Error {
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedRevision,
    readonly actual: number | 'no_stream',
  ) {
    super(`Wrong expected revision on ${streamId}: expected ${String(expected)}, actual ${String(actual)}`);
    this.name = 'WrongExpectedRevisionError';
  }
}

export interface ReadAllOptions {
  /** exclusive; START (or omitted) reads from the beginning */
  after?: Position;
  limit?: number;
  /** only streams whose id starts with one of these */
  streamPrefixes?: string[];
  /** only events of these types: a reader that ignores the others need not read them */
  eventTypes?: string[];
}

/**
 * Whether `options` read an event, for a store that filters in memory: its stream starts with one of
 * the prefixes and its type is one of the types (either absent or empty: any).
 */
export function readsEvent(options: Pick<ReadAllOptions, 'streamPrefixes' | 'eventTypes'>): (e: RecordedEvent) => boolean {
  const prefixes = options.streamPrefixes?.length ? options.streamPrefixes : null;
  const types = options.eventTypes?.length ? new Set(options.eventTypes) : null;
  return (e) => (!types || types.has(e.type)) && (!prefixes || prefixes.some((p) => e.streamId.startsWith(p)));
}

export interface SubscribeOptions extends ReadAllOptions {
  /** Called with each batch in order; the next batch waits for the promise. A throw stops the subscription and is passed to onError. */
  onEvents(events: RecordedEvent[]): Promise<void>;
  onError?(err: unknown): void;
}

export interface Subscription {
  close(): Promise<void>;
}

export interface AppendOptions {
  expectedRevision?: ExpectedRevision;
  /**
   * New data keys the events are sealed under (src/adapters/crypto/sealing-event-store.ts), stored in
   * the append's own transaction: stored when the events are appended (or found appended already, by
   * a retry), never when the append is refused, so a sealed append costs no round trip of its own for
   * its key. Only a store on the database of the key store takes them
   * (PostgreSQL, the data_keys table); the others refuse an append that carries any.
   */
  keys?: (KeySlot & WrappedKey)[];
}

export interface StreamAppend extends AppendOptions {
  streamId: string;
  events: NewEvent[];
}

export interface EventStore {
  append(streamId: string, events: NewEvent[], options?: AppendOptions): Promise<AppendResult>;
  /**
   * Optional: appends to many streams as one atomic step, each with its own expected revision; a
   * conflict on any stream throws WrongExpectedRevisionError and nothing is appended. One commit for
   * a whole batch is what makes bulk imports fast, and what makes a command that writes several
   * streams (signup: the account and its owner) all or nothing. Stores that cannot commit across
   * streams (EventStoreDB) leave it out; commands then append stream by stream in an order that
   * leaves nothing reachable half-written, and complete on a rerun (see
   * src/commands/execute-together.ts).
   */
  appendMany?(appends: StreamAppend[]): Promise<AppendResult[]>;
  /**
   * Optional: the current revision of each of the streams that exist (a stream absent from the map
   * does not), in one read. What lets a command trust a read model's row that records the revision it
   * reflects without reading the stream: the row is current when the two are equal. Stores that cannot
   * answer it in one step (EventStoreDB) leave it out, and the command reads the streams.
   */
  streamRevisions?(streamIds: string[]): Promise<Map<string, number>>;
  /** All events of one stream, oldest first; [] when the stream does not exist. */
  readStream(streamId: string, options?: { fromRevision?: number }): Promise<RecordedEvent[]>;
  /** Events of all streams in commit order: a reader never sees a later position before an earlier one commits. */
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  subscribe(options: SubscribeOptions): Subscription;
  close(): Promise<void>;
}
