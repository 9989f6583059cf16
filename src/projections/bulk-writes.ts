import type { Knex } from 'knex';

/**
 * The rows with these ids, by id: what a batch changes but did not create, read once for the whole
 * batch. The ids go as one array parameter, so no batch is too large for PostgreSQL's bind limit.
 */
export async function rowsById<R extends { id: string }>(trx: Knex.Transaction, table: string, ids: Iterable<string>, columns: readonly string[]): Promise<Map<string, R>> {
  const list = [...new Set(ids)];
  if (list.length === 0) return new Map();
  const rows = (await trx(table).whereRaw('id = ANY(?::text[])', [list]).select(columns)) as R[];
  return new Map(rows.map((r) => [r.id, r]));
}

/**
 * Inserts many rows with one bind parameter: the rows as a JSON array, expanded by PostgreSQL
 * against the table's own row type. A multi-row VALUES insert binds every cell (19,000 parameters for
 * 1,000 message rows), and building and serialising those cost more than the insert itself in a
 * rebuild. Row keys are column names; absent keys are NULL (not the column default).
 *
 * `conflict` is the conflict target; `update` the columns an existing row takes from the new one
 * (none: the existing row is kept).
 */
export async function insertRows(
  trx: Knex.Transaction,
  table: string,
  rows: object[],
  conflict: { target: string[]; update?: string[] },
): Promise<void> {
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]);
  const action = conflict.update?.length ? `DO UPDATE SET ${conflict.update.map(() => '?? = EXCLUDED.??').join(', ')}` : 'DO NOTHING';
  await trx.raw(
    `INSERT INTO ?? (${columns.map(() => '??').join(', ')})
     SELECT ${columns.map(() => 'r.??').join(', ')} FROM json_populate_recordset(NULL::??, ?::json) AS r
     ON CONFLICT (${conflict.target.map(() => '??').join(', ')}) ${action}`,
    [table, ...columns, ...columns, table, JSON.stringify(rows), ...conflict.target, ...(conflict.update ?? []).flatMap((c) => [c, c])],
  );
}

/**
 * Updates many rows by key with one bind parameter (the rows as JSON, read as the table's row type):
 * each row sets the columns it has, the key column included only to find the row.
 */
export async function updateRows(trx: Knex.Transaction, table: string, rows: object[], key = 'id'): Promise<void> {
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]).filter((c) => c !== key);
  await trx.raw(
    `UPDATE ?? AS t SET ${columns.map(() => '?? = v.??').join(', ')}
     FROM json_populate_recordset(NULL::??, ?::json) AS v WHERE t.?? = v.??`,
    [table, ...columns.flatMap((c) => [c, c]), table, JSON.stringify(rows), key, key],
  );
}
