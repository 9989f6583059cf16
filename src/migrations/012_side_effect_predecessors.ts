import type { Knex } from 'knex';

/**
 * Every webhook attempt asks whether an earlier delivery to the same endpoint and contact is still
 * open (pending or running). With only the pending-only ordering index, that question scanned every
 * open side effect: a fan-out to 1,000 subscriptions made it quadratic. This index answers it with one
 * probe per attempt.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE INDEX side_effects_open_ordering ON side_effects (ordering_key, seq) WHERE status IN ('pending', 'running') AND ordering_key IS NOT NULL`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX side_effects_open_ordering');
}
