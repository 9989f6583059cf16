import type { Knex } from 'knex';

/**
 * Provider events that name only the provider's message id, received before we recorded that id: kept
 * here and applied once the id is known, so none is lost.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE unmatched_provider_events (
      provider_event_id   text PRIMARY KEY,
      provider_message_id text NOT NULL,
      payload             jsonb NOT NULL,
      received_at         timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX unmatched_provider_events_pmid ON unmatched_provider_events (provider_message_id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE unmatched_provider_events;');
}
