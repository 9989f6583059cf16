import type { Knex } from 'knex';

/** Runs of the SMS opt-out sync: the latest result answers a forced sync that raced a running one. */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE sms_optout_sync_runs (
      id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      started_at  timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz,
      synced      int,
      total       int
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE sms_optout_sync_runs;');
}
