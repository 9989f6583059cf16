import type { Knex } from 'knex';

/**
 * Side effects that must happen in order (webhook deliveries for one contact to one endpoint) share an
 * ordering key; `seq` is the order they were decided in.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE side_effects ADD COLUMN ordering_key text;
    ALTER TABLE side_effects ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;
    CREATE INDEX side_effects_ordering ON side_effects (ordering_key, seq) WHERE status = 'pending' AND ordering_key IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE side_effects DROP COLUMN seq; ALTER TABLE side_effects DROP COLUMN ordering_key;');
}
