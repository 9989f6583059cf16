import type { Knex } from 'knex';

/**
 * Projection bookkeeping: which generation of each read model is active (the one its views show), and
 * every generation's checkpoint in the event log.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE projection_registry (
      name              text PRIMARY KEY,
      active_generation int NOT NULL,
      version           int NOT NULL,
      updated_at        timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE projection_checkpoints (
      name        text NOT NULL,
      generation  int NOT NULL,
      version     int NOT NULL,
      status      text NOT NULL,
      commit_pos  bigint NOT NULL DEFAULT 0,
      prepare_pos bigint NOT NULL DEFAULT 0,
      events      bigint NOT NULL DEFAULT 0,
      updated_at  timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (name, generation)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE projection_checkpoints; DROP TABLE projection_registry;');
}
