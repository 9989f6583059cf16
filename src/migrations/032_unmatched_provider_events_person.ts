import type { Knex } from 'knex';

/**
 * Parked provider events name their recipient: `person` is the keyed hash of that address, so that an
 * erasure finds and deletes a person's parked events (docs/privacy.md). Rows parked before this
 * migration have none; they are dropped within the seven days any parked event is kept.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE unmatched_provider_events ADD COLUMN person text;
    CREATE INDEX unmatched_provider_events_person ON unmatched_provider_events (person);
    CREATE INDEX unmatched_provider_events_received ON unmatched_provider_events (received_at);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX unmatched_provider_events_received; DROP INDEX unmatched_provider_events_person; ALTER TABLE unmatched_provider_events DROP COLUMN person;');
}
