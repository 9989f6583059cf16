import type { Knex } from 'knex';

/**
 * The contacts list's `listId` filter (`list_ids @> ARRAY[…]`) had no index: its count scanned every
 * contact of the account (a parallel sequential scan), and a rare list's page walked the account's
 * contacts newest first until 25 matched. A GIN index on `list_ids` answers the containment, as the
 * one on `tags` does for `tag`. New generations of the read model get it from the projection's
 * setup; this adds it to the live one without a rebuild.
 *
 * Outside a transaction, CONCURRENTLY: a plain CREATE INDEX blocks the read model's writes and holds
 * a transaction id for the whole build, which stalls the event store's readers.
 */
export const config = { transaction: false };

/** The contacts read model's live generation table, if there is one yet. */
async function liveContactsTable(knex: Knex): Promise<string | undefined> {
  const hasRegistry = await knex.schema.hasTable('projection_registry');
  const live = hasRegistry ? await knex('projection_registry').where({ name: 'contacts' }).first('active_generation') : undefined;
  if (!live) return undefined; // a new database: the projection's setup creates the table with the index
  const table = `contacts_g${live.active_generation}`;
  return (await knex.schema.hasTable(table)) ? table : undefined;
}

/**
 * Adds `<live table>_<suffix>` (`how`: the part after ON the table, ours alone) to the live generation
 * if there is one, CONCURRENTLY; a build interrupted earlier leaves an invalid index under the name,
 * which is dropped to start again.
 */
export async function indexLiveContacts(knex: Knex, suffix: string, how: string): Promise<void> {
  const table = await liveContactsTable(knex);
  if (!table) return;
  const index = `${table}_${suffix}`;
  const { rows } = await knex.raw('SELECT i.indisvalid AS valid FROM pg_index i WHERE i.indexrelid = to_regclass(?)', [index]);
  if (rows[0]?.valid === false) await knex.raw('DROP INDEX CONCURRENTLY ??', [index]);
  await knex.raw(`CREATE INDEX CONCURRENTLY IF NOT EXISTS ?? ON ?? ${how}`, [index, table]);
}

export async function dropLiveContactsIndex(knex: Knex, suffix: string): Promise<void> {
  const table = await liveContactsTable(knex);
  if (table) await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS ??', [`${table}_${suffix}`]);
}

export const up = (knex: Knex) => indexLiveContacts(knex, 'lists', 'USING gin (list_ids)');
export const down = (knex: Knex) => dropLiveContactsIndex(knex, 'lists');
