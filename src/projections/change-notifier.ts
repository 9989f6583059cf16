import type { Logger } from 'pino';
import type { Db } from '../adapters/db/knex.js';
import { comparePositions, indexAfter, START, type Position } from '../ports/event-store.js';
import { CHANGE_COLUMNS, IN_LOG_ORDER, type ChangeRow } from '../read-models/message-changes.js';

const POLL_MS = 20;
const POLL_ROWS = 5000;
/** How long the loop keeps the rows it read, for answering woken polls without a query each. */
const WINDOW_MS = 5_000;
const WINDOW_ROWS = 10_000;

/** Whose changes a long-poll waits for: the whole account (a dashboard user) or one key's. */
export type ChangeScope = { accountId: string; apiKeyId?: string };

export interface ChangeWatch {
  /** resolves at the first change for the scope after the watch began, or when `signal` aborts */
  changed: Promise<void>;
  dispose(): void;
}

interface Watcher {
  scope: ChangeScope;
  wake(): void;
}

interface SeenRow {
  row: ChangeRow;
  accountId: string;
  apiKeyId: string | null;
  position: Position;
  seenAt: number;
}

const inScope = (r: SeenRow, scope: ChangeScope) => r.accountId === scope.accountId && (!scope.apiKeyId || r.apiKeyId === scope.apiKeyId);

/**
 * Wakes long-polls of the changes feed when their caller's messages change, for every poller of one
 * API process with one query loop: while anyone waits, it reads the rows the `message_changes`
 * projection committed since its last look and wakes the watchers those rows concern. Nobody waiting,
 * no queries. It needs nothing from the process that wrote the rows, so any number of API and worker
 * processes share one database without a notification channel, and a waiter holds no connection:
 * only the loop's one query at a time does.
 *
 * A row becomes visible only after every row at a lower position (the projection applies batches in
 * commit order), so the loop's high-water mark never passes a row it has not seen. A watch taken
 * before the caller's own read is woken by any row that read missed: either the loop's last look
 * happened before that row committed, or the watch was registered when the look that saw it woke
 * everyone concerned.
 *
 * The same property makes the rows the loop read a complete copy of the feed between the mark where
 * it began keeping them and its current mark, so a poll whose cursor lies in that stretch is answered
 * from them (`recent`) instead of by a query of its own: a poller woken for one event read the table
 * once for it, and once more for its next poll, which at 1,000 pollers was most of the service's
 * work. Rows are kept for a few seconds: a poller far behind, or a row changed since (an erasure's
 * redaction), is read from the table.
 */
export function createChangeNotifier(deps: { db: Db; logger?: Logger; pollMs?: number; windowMs?: number; now?: () => number }) {
  const pollMs = deps.pollMs ?? POLL_MS;
  const windowMs = deps.windowMs ?? WINDOW_MS;
  const now = deps.now ?? Date.now;
  const watchers = new Set<Watcher>();
  /** every row after `keptFrom` the loop has read, in order; no window while the loop is not running */
  let kept: SeenRow[] = [];
  let keptFrom: Position | null = null;
  /** the loop's high-water mark: the last row it read (kept, or aged out with everything before it) */
  const mark = (): Position => kept.at(-1)?.position ?? keptFrom ?? START;
  /** settles once the loop is looking; null while nobody waits */
  let running: Promise<void> | null = null;

  const positionOf = (r: { commit_pos: string; prepare_pos: string }): Position => ({ commit: BigInt(r.commit_pos), prepare: BigInt(r.prepare_pos) });

  async function highWater(): Promise<Position> {
    const row = await deps.db('message_changes').orderBy(IN_LOG_ORDER.map((column) => ({ column, order: 'desc' }))).first(deps.db.raw('commit_pos::text AS commit_pos'), deps.db.raw('prepare_pos::text AS prepare_pos'));
    return row ? positionOf(row) : START;
  }

  function keep(rows: SeenRow[]) {
    kept.push(...rows);
    const oldest = now() - windowMs;
    let drop = Math.max(0, kept.length - WINDOW_ROWS);
    while (drop < kept.length && kept[drop].seenAt < oldest) drop++;
    if (drop > 0) {
      keptFrom = kept[drop - 1].position;
      kept = kept.slice(drop);
    }
  }

  async function look(): Promise<number> {
    const from = mark();
    const rows: (ChangeRow & { account_id: string; api_key_id: string | null })[] = await deps
      .db('message_changes')
      .whereRaw('(commit_pos, prepare_pos) > (?::bigint, ?::bigint)', [String(from.commit), String(from.prepare)])
      .orderBy(IN_LOG_ORDER)
      .limit(POLL_ROWS)
      .select('account_id', 'api_key_id', ...CHANGE_COLUMNS(deps.db));
    const seenAt = now();
    const seen = rows.map(({ account_id, api_key_id, ...row }) => ({ row, accountId: account_id, apiKeyId: api_key_id, position: positionOf(row), seenAt }));
    // also when nothing came: what was kept ages out on a quiet feed too
    keep(seen);
    if (seen.length === 0) return 0;
    const accounts = new Set(seen.map((r) => r.accountId));
    const keys = new Set(seen.map((r) => r.apiKeyId).filter(Boolean));
    for (const w of watchers) {
      if (w.scope.apiKeyId ? keys.has(w.scope.apiKeyId) : accounts.has(w.scope.accountId)) w.wake();
    }
    return seen.length;
  }

  async function run(): Promise<void> {
    while (watchers.size > 0) {
      let seen = 0;
      try {
        seen = await look();
      } catch (err) {
        // Looked at again next tick; waiters meanwhile time out with nothing, never with a wrong answer.
        deps.logger?.warn({ err }, 'changes feed: polling for new rows failed');
      }
      if (seen < POLL_ROWS) await new Promise((r) => setTimeout(r, pollMs));
    }
    // Nobody follows the mark any more: what was kept stops being complete.
    kept = [];
    keptFrom = null;
    running = null;
  }

  /**
   * Starts the loop from the current high-water mark (not from where an earlier loop stopped, which
   * could be far behind): the caller's read comes after this, so nothing it misses is below the mark.
   */
  function ensureRunning(): Promise<void> {
    if (running) return running;
    const starting = highWater().then((m) => {
      kept = [];
      keptFrom = m;
      void run();
    });
    running = starting;
    // A failed start is retried by the next watch.
    starting.catch(() => {
      if (running === starting) running = null;
    });
    return starting;
  }

  return {
    /**
     * Begins watching before the caller reads: a change committed after that read wakes `changed`.
     * Resolves once the loop is looking, so a change between this call and the read is not lost.
     */
    async watch(scope: ChangeScope, signal?: AbortSignal): Promise<ChangeWatch> {
      let wake!: () => void;
      const changed = new Promise<void>((resolve) => (wake = resolve));
      const watcher: Watcher = { scope, wake };
      const onAbort = () => wake();
      const dispose = () => {
        watchers.delete(watcher);
        signal?.removeEventListener('abort', onAbort);
      };
      watchers.add(watcher);
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        await ensureRunning();
      } catch (err) {
        dispose();
        throw err;
      }
      return { changed, dispose };
    },

    /**
     * The scope's first `limit` rows after `after` up to the loop's mark, from the rows it read, when
     * it still has every row after `after` (the caller holds a watch, so the loop is running); else
     * undefined, and the caller reads the table. Rows past the mark come with a later look, which
     * wakes the caller's watch.
     */
    recent(scope: ChangeScope, after: { commit: string; prepare: string }, limit: number): ChangeRow[] | undefined {
      const from = { commit: BigInt(after.commit), prepare: BigInt(after.prepare) };
      if (!keptFrom || comparePositions(from, keptFrom) < 0) return undefined;
      const rows: ChangeRow[] = [];
      for (let i = indexAfter(kept, from); i < kept.length && rows.length < limit; i++) if (inScope(kept[i], scope)) rows.push(kept[i].row);
      return rows;
    },
  };
}
export type ChangeNotifier = ReturnType<typeof createChangeNotifier>;
