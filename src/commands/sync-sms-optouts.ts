import type { Db } from '../adapters/db/knex.js';
import { syncedInAll, type RecordedSyncRun, type SyncRuns } from '../adapters/db/sync-runs.js';
import { parsePhoneNumber } from '../domain/sms/phone.js';
import { laterPosition, type Position } from '../ports/event-store.js';
import type { SmsProvider } from '../ports/sms-provider.js';
import type { createProjectionWaiter } from '../projections/waiter.js';
import type { SuppressionCommands } from './suppressions.js';
import { accountsSendingSms } from '../read-models/accounts.js';
import { suppressedPhones } from '../read-models/suppressions.js';

const ACTOR = 'system:sms-optout-sync';
/** how long a sync waits, at its end, for the suppression list to show what it appended */
const READ_MODEL_WAIT_MS = 60_000;

export interface SyncResult {
  /** suppressions this run added to the asking account (to every SMS-enabled account for the background sync) */
  synced: number;
  /** distinct numbers opted out at the provider */
  total: number;
}

/** The run as one account sees it, or as the service does (no account: summed). */
const resultFor = (run: RecordedSyncRun, accountId?: string): SyncResult => ({
  synced: accountId === undefined ? syncedInAll(run) : (run.syncedByAccount[accountId] ?? 0),
  total: run.total,
});

/**
 * Moves numbers opted out at the SMS provider (STOP, UNSUBSCRIBE, CANCEL, ...) onto the suppression
 * list of every account with SMS enabled (source `sms_optout`, webhook `contact.suppressed`). The
 * provider's list is the truth: a number whose suppression an admin lifted comes back while it stays
 * opted out there (the provider would not deliver to it anyway).
 *
 * One sync at a time across processes (`SyncRuns.exclusively`): a caller that finds one running is
 * answered with its result.
 */
export function createSmsOptOutSync(deps: {
  db: Db;
  provider: SmsProvider;
  suppressions: SuppressionCommands;
  runs: SyncRuns;
  waiter: Pick<ReturnType<typeof createProjectionWaiter>, 'waitFor'>;
  onSkipped?: (raw: string) => void;
}) {
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

  async function run(): Promise<RecordedSyncRun> {
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
    if (last) await deps.waiter.waitFor('suppressions', last, READ_MODEL_WAIT_MS);
    return { syncedByAccount, total: numbers.length };
  }

  return {
    /** `accountId`: the account that asked (a forced sync), whose additions the answer counts. */
    async sync(accountId?: string): Promise<SyncResult> {
      return resultFor(await deps.runs.exclusively(run), accountId);
    },
  };
}
export type SmsOptOutSync = ReturnType<typeof createSmsOptOutSync>;
