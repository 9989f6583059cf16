import { comparePositions, indexAfter, START, type Position, type RecordedEvent } from '../../ports/event-store.js';

/** One page of the whole log after a position, and the head of the same snapshot (see readAllWithHead). */
export interface LogPage {
  events: RecordedEvent[];
  head: Position | null;
  /**
   * Committed events exist beyond what the page could take: their transactions began after one still
   * running, and are readable once it ends (the reader should look again soon, not at its next poll).
   */
  held: boolean;
}

export interface TailAnswer {
  /** the matching events after the reader's position, at most its limit, in commit order */
  events: RecordedEvent[];
  /** when fewer than the limit came back: no other matching event exists up to here */
  head: Position;
  /** false while the tail is still reading a backlog: the reader should ask again at once */
  complete: boolean;
  /** committed events are held back beyond the head (LogPage.held) */
  held: boolean;
}

export interface LogTailOptions {
  /** the log after `after`, unfiltered, at most `limit` events (0: the head alone) */
  read(after: Position, limit: number): Promise<LogPage>;
  /** events kept in memory; a reader further behind reads the log itself (default 10,000) */
  capacity?: number;
  /**
   * and at most about this many characters of their data (default 32 M): a campaign's messages carry
   * their bodies, and 10,000 of 50 kB each would hold half a gigabyte
   */
  capacityChars?: number;
  /** events per read of the log (default 1,000) */
  pageSize?: number;
}

/**
 * About how much of the heap an event holds, in characters: its data's text (bodies, sealed personal
 * data) is nearly all of a large one; what is nested deeper (headers, tags) is small.
 */
function sizeOf(e: RecordedEvent): number {
  let size = 256;
  const data = e.data as Record<string, unknown> | null;
  if (data && typeof data === 'object') for (const key in data) if (typeof data[key] === 'string') size += (data[key] as string).length;
  return size;
}

/**
 * The newest stretch of the event log, read once for all the subscriptions of a process. A worker
 * follows the log with a dozen read models and process managers that are, most of the time, all at
 * its head: each read every commit for itself (a database round trip per follower per wake-up, and
 * the same rows parsed once per follower). The tail reads each new page once; a follower whose
 * position is inside it takes its own events from memory, filtered by its stream prefixes and event
 * types. Reads give the same guarantees as the store's own: a read begins after it was asked (it
 * never shares a read of the log that was already running, which might predate a commit the
 * follower was woken for), and the tail holds every event between its start and its head.
 */
export function createLogTail(options: LogTailOptions) {
  const capacity = options.capacity ?? 10_000;
  const pageSize = options.pageSize ?? 1_000;
  const capacityChars = options.capacityChars ?? 32 * 1024 * 1024;
  let events: RecordedEvent[] = [];
  /** the kept events' sizes (sizeOf), summed */
  let chars = 0;
  /** exclusive; null until the first read: every event after it up to `head` is in `events` */
  let from: Position | null = null;
  let head: Position = START;
  let complete = false;
  let held = false;
  let running: Promise<void> | null = null;
  let next: Promise<void> | null = null;

  async function readPage(): Promise<void> {
    if (from === null) {
      // The tail starts at the head: the events before it are read by whoever is behind.
      const page = await options.read(START, 0);
      from = head = page.head ?? START;
      complete = true;
      held = page.held;
      return;
    }
    const page = await options.read(head, pageSize);
    for (const e of page.events) {
      events.push(e);
      chars += sizeOf(e);
    }
    const last = page.events.at(-1)?.position;
    complete = page.events.length < pageSize;
    held = page.held;
    // A full page says nothing beyond its last event; a short one covers the snapshot's head.
    if (last) head = last;
    if (complete && page.head && comparePositions(page.head, head) > 0) head = page.head;
    let cut = Math.max(0, events.length - capacity);
    for (let i = 0; i < cut; i++) chars -= sizeOf(events[i]);
    while (cut < events.length && chars > capacityChars) chars -= sizeOf(events[cut++]);
    if (cut > 0) {
      from = events[cut - 1].position;
      events = events.slice(cut);
    }
  }

  /** A read of the log that begins after this call: the running one's successor when one runs. */
  function refresh(): Promise<void> {
    if (!running) {
      running = readPage().finally(() => (running = null));
      return running;
    }
    next ??= running
      .catch(() => {})
      .then(() => {
        next = null;
        return refresh();
      });
    return next;
  }

  return {
    /**
     * The events after `after` that `matches` takes, at most `limit`, as the log stands after this
     * call; null when `after` is before the tail (the reader reads the log itself until it catches up).
     */
    async read(after: Position, limit: number, matches: (e: RecordedEvent) => boolean): Promise<TailAnswer | null> {
      if (from !== null && comparePositions(after, from) < 0) return null;
      await refresh();
      if (comparePositions(after, from!) < 0) return null;
      const found: RecordedEvent[] = [];
      for (let i = indexAfter(events, after); i < events.length && found.length < limit; i++) if (matches(events[i])) found.push(events[i]);
      return { events: found, head, complete, held };
    },
  };
}
export type LogTail = ReturnType<typeof createLogTail>;
