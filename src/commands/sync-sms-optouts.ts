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
  /** suppressions added by this run (summed over the SMS-enabled accounts) */
  synced: number;
  /** distinct numbers opted out at the provider */
  total: number;
}

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

  async function runLocked(): Promise<SyncResult> {
    const [run] = await deps.db('sms_optout_sync_runs').insert({}).returning('id');
    const accounts = await accountsSendingSms(deps.db);
    // A server where no account sends SMS has no business asking the provider (nor AWS credentials for it).
    const numbers = accounts.length ? await listAll() : [];
    let synced = 0;
    let last: Position | undefined;
    for (const { id: accountId } of accounts) {
      const known = await suppressedPhones(deps.db, accountId, numbers);
      // Appended without waiting for the list (a wait costs up to a second each): the sync waits once,
      // at its end. No fixed commandId: it would silently swallow a re-suppression after a lift.
      const result = await deps.suppressions.recordMany(
        numbers.filter((n) => !known.has(n)).map((phone) => ({ accountId, phone, reason: 'sms_optout' as const, source: 'sms_optout' as const, actor: ACTOR })),
      );
      synced += result.suppressed;
      last = laterPosition(last, result.position);
    }
    // Once the sync answers, sends to these numbers are refused (they read the suppression list).
    if (last) await waiter.waitFor('suppressions', last, READ_MODEL_WAIT_MS);
    const result = { synced, total: numbers.length };
    // The database clock, as the waiters compare with it.
    await deps.db('sms_optout_sync_runs').where({ id: run.id }).update({ finished_at: deps.db.raw('clock_timestamp()'), ...result });
    return result;
  }

  return {
    async sync(): Promise<SyncResult> {
      const conn = await deps.db.client.acquireConnection();
      const q = (sql: string) => conn.query(sql, [LOCK_KEY]);
      try {
        if ((await q('SELECT pg_try_advisory_lock(hashtext($1)) AS owned')).rows[0].owned) {
          try {
            return await runLocked();
          } finally {
            await q('SELECT pg_advisory_unlock(hashtext($1))');
          }
        }
        // Someone else is syncing: wait for that run and report it.
        const { rows } = await conn.query('SELECT clock_timestamp() AS t');
        await q('SELECT pg_advisory_lock(hashtext($1))');
        try {
          const finished = await deps.db('sms_optout_sync_runs').where('finished_at', '>=', rows[0].t).orderBy('id', 'desc').first('synced', 'total');
          return finished ? { synced: finished.synced, total: finished.total } : await runLocked();
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
