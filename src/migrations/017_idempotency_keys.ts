import type { Knex } from 'knex';

/**
 * Idempotency-Key records of the send API: one row per caller and key, the state of its decider
 * (src/domain/idempotency/record.ts). A table rather than a stream: a record lives a day, and one that
 * ends in a refusal is deleted at once. `token` names the current holder of an in-flight claim; every
 * write is conditional on it, so a process that lost its claim to a takeover changes nothing.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE idempotency_keys (
      scope           text NOT NULL,
      key             text NOT NULL,
      fingerprint     text NOT NULL,
      status          text NOT NULL CHECK (status IN ('in_flight', 'completed')),
      token           text NOT NULL,
      seed            text NOT NULL,
      claimed_at      timestamptz NOT NULL,
      held_since      timestamptz NOT NULL,
      response_status integer,
      response_body   jsonb,
      PRIMARY KEY (scope, key)
    );
    CREATE INDEX idempotency_keys_claimed_at ON idempotency_keys (claimed_at);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE idempotency_keys;');
}
