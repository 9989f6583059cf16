import type { Knex } from 'knex';

/**
 * Who was erased, by keyed hash only: events written in clear before the log was sealed are hidden
 * from readers for these persons. And the value that tells a wrong ENCRYPTION_KEY at start-up.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE erased_people (
      account_id text NOT NULL,
      person     text NOT NULL,
      erased_at  timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (account_id, person)
    );
    CREATE TABLE data_key_verifier (
      id    smallint PRIMARY KEY CHECK (id = 1),
      value text NOT NULL
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE erased_people; DROP TABLE data_key_verifier;');
}
