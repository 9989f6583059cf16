import type { Knex } from 'knex';

/**
 * Operational state that is deliberately NOT event-sourced, so rebuilding read models never touches it:
 * generated secrets, API key last-use stamps, and the atomic daily send counters that make caps exact
 * under concurrency.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE service_secrets (
      name       text PRIMARY KEY,
      value      text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE api_key_usage (
      api_key_id   text PRIMARY KEY,
      last_used_at timestamptz NOT NULL
    );
    CREATE TABLE send_counters (
      scope  text NOT NULL,
      day    date NOT NULL,
      count  int  NOT NULL,
      PRIMARY KEY (scope, day)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE send_counters; DROP TABLE api_key_usage; DROP TABLE service_secrets;');
}
