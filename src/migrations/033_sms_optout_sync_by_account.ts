import type { Knex } from 'knex';

/**
 * What a sync run added to each account, so that a forced sync answers its caller's account only: the
 * provider's opt-out list is the deployment's, the suppressions it adds are each account's own.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE sms_optout_sync_runs ADD COLUMN synced_by_account jsonb NOT NULL DEFAULT '{}'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE sms_optout_sync_runs DROP COLUMN synced_by_account');
}
