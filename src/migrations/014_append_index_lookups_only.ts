import type { Knex } from 'knex';

const SIGNATURE = 'append_events(text, text, uuid[], text[], int[], jsonb[], jsonb[])';

/**
 * append_events only ever looks rows up by a unique key (event ids, stream id), so an index is always
 * the right plan. Left to the planner, a cold database (a fresh `events` table, no statistics yet,
 * concurrent bulk appends) sometimes settled on sequential scans, and a statement that appends 500
 * streams (appendMany) kept that plan for all 500 calls while the table grew under it: one bench run
 * had two such statements scanning for 19 minutes, holding back the snapshot xmin every reader waits
 * on. A later CREATE OR REPLACE of the function must repeat this setting.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER FUNCTION ${SIGNATURE} SET enable_seqscan = off`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER FUNCTION ${SIGNATURE} RESET enable_seqscan`);
}
