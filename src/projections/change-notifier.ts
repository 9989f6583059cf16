import type { Logger } from 'pino';
import type { Db } from '../adapters/db/knex.js';

const POLL_MS = 20;
const POLL_ROWS = 5000;

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

/**
 * Wakes long-polls of the changes feed when their caller's messages change, for every poller of one
 * API process with one query loop: while anyone waits, it reads the rows the `message_changes`
 * projection committed since its last look (owners and positions only, from the primary key) and
 * wakes the watchers those rows concern. Nobody waiting, no queries. It needs nothing from the process
 * that wrote the rows, so any number of API and worker processes share one database without a
 * notification channel, and a waiter holds no connection: only the loop's one query at a time does.
 *
 * A row becomes visible only after every row at a lower position (the projection applies batches in
 * commit order), so the loop's high-water mark never passes a row it has not seen. A watch taken
 * before the caller's own read is woken by any row that read missed: either the loop's last look
 * happened before that row committed, or the watch was registered when the look that saw it woke
 * everyone concerned.
 */
export function createChangeNotifier(deps: { db: Db; logger?: Logger; pollMs?: number }) {
  const pollMs = deps.pollMs ?? POLL_MS;
  const watchers = new Set<Watcher>();
  let mark = { commit: '0', prepare: '0' };
  /** settles once the loop is looking; null while nobody waits */
  let running: Promise<void> | null = null;

  async function highWater() {
    const row = await deps.db('message_changes').orderBy([{ column: 'commit_pos', order: 'desc' }, { column: 'prepare_pos', order: 'desc' }]).first(deps.db.raw('commit_pos::text AS commit_pos'), deps.db.raw('prepare_pos::text AS prepare_pos'));
    return { commit: String(row?.commit_pos ?? 0), prepare: String(row?.prepare_pos ?? 0) };
  }

  async function look(): Promise<number> {
    const rows = await deps
      .db('message_changes')
      .whereRaw('(commit_pos, prepare_pos) > (?::bigint, ?::bigint)', [mark.commit, mark.prepare])
      .orderBy([{ column: 'commit_pos' }, { column: 'prepare_pos' }])
      .limit(POLL_ROWS)
      .select('account_id', 'api_key_id', deps.db.raw('commit_pos::text AS commit_pos'), deps.db.raw('prepare_pos::text AS prepare_pos'));
    if (rows.length === 0) return 0;
    const last = rows[rows.length - 1];
    mark = { commit: String(last.commit_pos), prepare: String(last.prepare_pos) };
    const accounts = new Set(rows.map((r) => r.account_id as string));
    const keys = new Set(rows.map((r) => r.api_key_id as string | null).filter(Boolean));
    for (const w of watchers) {
      if (w.scope.apiKeyId ? keys.has(w.scope.apiKeyId) : accounts.has(w.scope.accountId)) w.wake();
    }
    return rows.length;
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
    running = null;
  }

  /**
   * Starts the loop from the current high-water mark (not from where an earlier loop stopped, which
   * could be far behind): the caller's read comes after this, so nothing it misses is below the mark.
   */
  function ensureRunning(): Promise<void> {
    if (running) return running;
    const starting = highWater().then((m) => {
      mark = m;
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
  };
}
export type ChangeNotifier = ReturnType<typeof createChangeNotifier>;
