import type { Db } from '../adapters/db/knex.js';

/** One of an account's campaigns (these columns of it), or undefined. */
export const campaignRow = (db: Db, accountId: string, id: string, columns: string[] = ['*']): Promise<Record<string, any> | undefined> =>
  db('campaigns').where({ id, account_id: accountId }).first(columns);

/** An account's campaigns, newest first. */
export const campaignsOf = (db: Db, accountId: string): Promise<Record<string, any>[]> =>
  db('campaigns').where({ account_id: accountId }).orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]);

/** Campaigns due at `at`: scheduled ones whose time has come, and those the daily cap paused whose day is over. */
export const dueCampaigns = (db: Db, at: string): Promise<{ id: string; status: 'scheduled' | 'paused' }[]> =>
  db('campaigns')
    .where((q) => q.where('status', 'scheduled').andWhere('scheduled_at', '<=', at))
    .orWhere((q) => q.where({ status: 'paused', paused_reason: 'daily_send_cap' }).andWhere('resume_at', '<=', at))
    .select('id', 'status');
