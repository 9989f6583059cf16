import type { Knex } from 'knex';
import { liveContactsTable } from './030_contacts_list_index.js';

/**
 * A campaign to all of an account's contacts (an audience with neither list nor tag) walks them in id
 * order a page at a time. No index led with (account_id, id): each page either sorted every contact of
 * the account or walked the primary key past other accounts' contacts. New generations of the read
 * model get the index from the projection's setup; this adds it to the live one without a rebuild.
 *
 * Outside a transaction, CONCURRENTLY, as migration 030: a plain CREATE INDEX blocks the read model's
 * writes and holds a transaction id for the whole build, which stalls the event store's readers.
 */
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  const table = await liveContactsTable(knex);
  if (!table) return;
  const index = `${table}_audience`;
  // a build interrupted earlier leaves an invalid index under the name: start again
  const { rows } = await knex.raw('SELECT i.indisvalid AS valid FROM pg_index i WHERE i.indexrelid = to_regclass(?)', [index]);
  if (rows[0]?.valid === false) await knex.raw('DROP INDEX CONCURRENTLY ??', [index]);
  await knex.raw('CREATE INDEX CONCURRENTLY IF NOT EXISTS ?? ON ?? (account_id, id)', [index, table]);
}

export async function down(knex: Knex): Promise<void> {
  const table = await liveContactsTable(knex);
  if (table) await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS ??', [`${table}_audience`]);
}
