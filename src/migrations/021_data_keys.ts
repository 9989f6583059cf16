import type { Knex } from 'knex';

/**
 * The per-person data keys (docs/privacy.md), each wrapped under the key-encryption key. The one
 * table whose rows are deleted to forget someone: personal data in the event log is sealed under these
 * keys. `person` is the keyed hash of the address, never the address; `scope` is `profile` or a UTC
 * day of message content (retention destroys days). A person may have several keys of one scope
 * (see KeyStore.store).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE data_keys (
      id         uuid PRIMARY KEY,
      account_id text NOT NULL,
      person     text NOT NULL,
      scope      text NOT NULL,
      wrapped    bytea NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX data_keys_person ON data_keys (account_id, person);
    CREATE INDEX data_keys_account_scope ON data_keys (account_id, scope);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE data_keys;');
}
