import type { Knex } from 'knex';

/**
 * Process managers follow the event log with their own checkpoints and are never rebuilt. Each side
 * effect they decide on is a row here, unique per (event, target), written in the same transaction as
 * the checkpoint; the job queue only carries the row's id, so a lost job is found again by the sweeper.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE process_manager_checkpoints (
      name           text PRIMARY KEY,
      commit_pos     bigint NOT NULL,
      prepare_pos    bigint NOT NULL,
      updated_at     timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE side_effects (
      id          text PRIMARY KEY,
      kind        text NOT NULL,
      payload     jsonb NOT NULL,
      status      text NOT NULL DEFAULT 'pending',
      run_after   timestamptz NOT NULL DEFAULT now(),
      -- a worker performing the effect holds it until then; past it, the claim is considered lost
      claimed_until timestamptz,
      created_at  timestamptz NOT NULL DEFAULT now(),
      done_at     timestamptz
    );
    CREATE INDEX side_effects_open ON side_effects (run_after) WHERE status <> 'done';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE side_effects; DROP TABLE process_manager_checkpoints;');
}
