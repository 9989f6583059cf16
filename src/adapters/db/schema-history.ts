import { UNDEFINED_TABLE, type Db } from './knex.js';

/**
 * Whether this database was first migrated by a version that kept personal data in clear: one whose
 * first migrations ran in an earlier batch than the one adding the data keys (a database made since
 * runs them all in its first batch). Its contact and suppression streams were named by address.
 */
export async function predatesSealing(db: Db): Promise<boolean> {
  let rows: { name: string; batch: number }[];
  try {
    rows = await db('knex_migrations').whereIn('name', ['001_event_store', '021_data_keys']).select('name', 'batch');
  } catch (err) {
    if ((err as { code?: string }).code === UNDEFINED_TABLE) return false; // never migrated: nothing from before
    throw err;
  }
  const batch = new Map(rows.map((r) => [r.name, Number(r.batch)]));
  return (batch.get('001_event_store') ?? 0) < (batch.get('021_data_keys') ?? 0);
}
