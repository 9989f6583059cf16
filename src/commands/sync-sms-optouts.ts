import type { Db } from '../adapters/db/knex.js';
import { parsePhoneNumber } from '../domain/sms/phone.js';
import { laterPosition, type Position } from '../ports/event-store.js';
import type { SmsProvider } from '../ports/sms-provider.js';
import { createProjectionWaiter } from '../projections/waiter.js';
import type { SuppressionCommands } from './suppressions.js';
import { accountsSendingSms } from '../read-models/accounts.js';
import { suppressedPhones } from '../read-models/suppressions.js';

const LOCK_KEY = 'sms-optout-sync';
const ACTOR = 'system:sms-optout-sync';
/** how long a sync waits, at its end, for the suppression list to show what it appended */
const READ_MODEL_WAIT_MS = 60_000;

export interface SyncResult {
  /** suppressions this run added to the asking account (to every SMS-enabled account for the background sync) */
  synced: number;
  /** distinct numbers opted out at the provider */
  total: number;
}

/** A run as recorded: what it added to each account. */
interface SyncRun {
  syncedByAccount: Record<string, number>;
  total: number;
}

/** The run as one account sees it, or as the service does (no account: summed). */
const resultFor = (run: SyncRun, accountId?: string): SyncResult => ({
  synced: accountId === undefined ? Object.values(run.syncedByAccount).reduce((a, b) => a + b, 0) : (run.syncedByAccount[accountId] ?? 0),
  total: run.total,
});

/**
 * Moves numbers opted out at the SMS provider (STOP, UNSUBSCRIBE, CANCEL, ...) onto the suppression
 * list of every account with SMS enabled (source `sms_optout`, webhook `contact.suppressed`). The
 * provider's list is the truth: a number whose suppression an admin lifted comes back while it stays
 * opted out there (the provider would not deliver to it anyway).
 *
 * One sync at a time across processes (a session advisory lock). A caller that finds one running
 * waits for it and answers with its result instead of listing and suppressing a second time; only if
 * that run failed does it run one itself.
 */
export function createSmsOptOutSync(deps: {
  db: Db;
  provider: SmsProvider;
  suppressions: SuppressionCommands;
  onSkipped?: (raw: string) => void;
}) {
  const waiter = createProjectionWaiter({ db: deps.db });

  async function listAll(): Promise<string[]> {
    const numbers = new Set<string>();
    let token: string | undefined;
    do {
      const page = await deps.provider.listOptedOut(token);
      for (const raw of page.phoneNumbers) {
        const phone = parsePhoneNumber(raw);
        // One odd entry must not stop the whole sync (suppress() would refuse it).
        if (phone) numbers.add(phone);
        else deps.onSkipped?.(raw);
      }
      token = page.nextToken;
    } while (token);
    return [...numbers];
  }

  async function runLocked(): Promise<SyncRun> {
    const [run] = await deps.db('sms_optout_sync_runs').insert({}).returning('id');
    const accounts = await accountsSendingSms(deps.db);
    // A server where no account sends SMS has no business asking the provider (nor AWS credentials for it).
    const numbers = accounts.length ? await listAll() : [];
    const syncedByAccount: Record<string, number> = {};
    let last: Position | undefined;
    for (const { id: accountId } of accounts) {
      const known = await suppressedPhones(deps.db, accountId, numbers);
      // Appended without waiting for the list (a wait costs up to a second each): the sync waits once,
      // at its end. No fixed commandId: it would silently swallow a re-suppression after a lift.
      const result = await deps.suppressions.recordMany(
        numbers.filter((n) => !known.has(n)).map((phone) => ({ accountId, phone, reason: 'sms_optout' as const, source: 'sms_optout' as const, actor: ACTOR })),
      );
      syncedByAccount[accountId] = result.suppressed;
      last = laterPosition(last, result.position);
    }
    // Once the sync answers, sends to these numbers are refused (they read the suppression list).
    if (last) await waiter.waitFor('suppressions', last, READ_MODEL_WAIT_MS);
    const recorded = { syncedByAccount, total: numbers.length };
    // The database clock, as the waiters compare with it.
    await deps.db('sms_optout_sync_runs')
      .where({ id: run.id })
      .update({ finished_at: deps.db.raw('clock_timestamp()'), synced: resultFor(recorded).synced, synced_by_account: JSON.stringify(syncedByAccount), total: recorded.total });
    return recorded;
  }

  return {
    /** `accountId`: the account that asked (a forced sync), whose additions the answer counts. */
    async sync(accountId?: string): Promise<SyncResult> {
      const conn = await deps.db.client.acquireConnection();
      const q = (sql: string) => conn.query(sql, [LOCK_KEY]);
      try {
        if ((await q('SELECT pg_try_advisory_lock(hashtext($1)) AS owned')).rows[0].owned) {
          try {
            return resultFor(await runLocked(), accountId);
          } finally {
            await q('SELECT pg_advisory_unlock(hashtext($1))');
          }
        }
        // Someone else is syncing: wait for that run and report it.
        const { rows } = await conn.query('SELECT clock_timestamp() AS t');
        await q('SELECT pg_advisory_lock(hashtext($1))');
        try {
          const finished = await deps.db('sms_optout_sync_runs').where('finished_at', '>=', rows[0].t).orderBy('id', 'desc').first('synced_by_account', 'total');
          return resultFor(finished ? { syncedByAccount: finished.synced_by_account, total: finished.total } : await runLocked(), accountId);
        } finally {
          await q('SELECT pg_advisory_unlock(hashtext($1))');
        }
      } finally {
        await deps.db.client.releaseConnection(conn);
      }
    },
  };
}
export type SmsOptOutSync = ReturnType<typeof createSmsOptOutSync>;
