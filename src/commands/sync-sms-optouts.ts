import type { Db } from '../adapters/db/knex.js';
import type { SmsProvider } from '../ports/sms-provider.js';
import type { SuppressionCommands } from './suppressions.js';

const LOCK_KEY = 'sms-optout-sync';

/**
 * Moves numbers opted out at the SMS provider (STOP, UNSUBSCRIBE, CANCEL, ...) onto the suppression
 * list of every account with SMS enabled (source `sms_optout`, webhook `contact.suppressed`).
 * One sync at a time across processes: a caller that finds one running waits for it and answers with
 * its result instead of running a second one.
 */
export function createSmsOptOutSync(deps: { db: Db; provider: SmsProvider; suppressions: SuppressionCommands }) {
  async function runLocked(): Promise<{ synced: number; total: number }> {
    const [run] = await deps.db('sms_optout_sync_runs').insert({}).returning('id');
    const numbers: string[] = [];
    let token: string | undefined;
    do {
      const page = await deps.provider.listOptedOut(token);
      numbers.push(...page.phoneNumbers);
      token = page.nextToken;
    } while (token);

    const accounts = await deps.db('accounts').whereRaw("(sms->>'enabled')::boolean").select('id');
    let synced = 0;
    for (const { id: accountId } of accounts) {
      const existing = new Set(
        (await deps.db('suppressions').where({ account_id: accountId, kind: 'phone' }).whereIn('value', numbers).select('value')).map((r) => r.value),
      );
      for (const phone of numbers.filter((n) => !existing.has(n))) {
        const result = await deps.suppressions.suppress({
          accountId,
          phone,
          reason: 'sms_optout',
          source: 'sms_optout',
          actor: 'system:sms-optout-sync',
          commandId: `sms-optout:${phone}`,
        });
        if (result.suppressed) synced++;
      }
    }
    const total = new Set(numbers).size;
    await deps.db('sms_optout_sync_runs').where({ id: run.id }).update({ finished_at: new Date(), synced, total });
    return { synced, total };
  }

  return {
    async sync(): Promise<{ synced: number; total: number }> {
      const conn = await deps.db.client.acquireConnection();
      try {
        const { rows } = await conn.query('SELECT pg_try_advisory_lock(hashtext($1)) AS owned', [LOCK_KEY]);
        if (rows[0].owned) {
          try {
            return await runLocked();
          } finally {
            await conn.query('SELECT pg_advisory_unlock(hashtext($1))', [LOCK_KEY]);
          }
        }
        // Someone else is syncing: wait for that run and report it.
        await conn.query('SELECT pg_advisory_lock(hashtext($1))', [LOCK_KEY]);
        await conn.query('SELECT pg_advisory_unlock(hashtext($1))', [LOCK_KEY]);
        const last = await deps.db('sms_optout_sync_runs').whereNotNull('finished_at').orderBy('id', 'desc').first('synced', 'total');
        return { synced: last?.synced ?? 0, total: last?.total ?? 0 };
      } finally {
        await deps.db.client.releaseConnection(conn);
      }
    },
  };
}
export type SmsOptOutSync = ReturnType<typeof createSmsOptOutSync>;
