import type { Knex } from 'knex';

/**
 * A replay answers the first response byte for byte: jsonb keeps an object's keys in its own order
 * (shortest first), json keeps the text it was given. A row written as jsonb becomes that jsonb's text,
 * the same value, which its replays already answered in that order. Writers still casting to jsonb (a
 * process from before this, during an upgrade) are cast again on assignment.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE idempotency_keys ALTER COLUMN response_body TYPE json USING response_body::json');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE idempotency_keys ALTER COLUMN response_body TYPE jsonb USING response_body::jsonb');
}
