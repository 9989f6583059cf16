import type { Knex } from 'knex';

/** A batch this small never changes which plan fits the table. */
const MIN_ROWS = 100;
/** Growth, as a share of the rows the planner last counted, that calls for new statistics. */
const GROWTH = 0.1;

/**
 * Gives the planner new statistics at once when a batch grew `table` by a tenth or more. Statements
 * prepared over it (the admissions of email and SMS sends) keep the plan made for the table
 * as it was until its statistics change: one made for an empty suppression list probed a 100,000-row
 * list at 30 ms a statement instead of 0.4 ms. Autovacuum would analyze it too, but up to a minute
 * later (and not at all where it is switched off); ANALYZE inside this transaction counts the rows it
 * has just written.
 */
export async function analyzeAfterGrowth(trx: Knex.Transaction, table: string, added: number): Promise<void> {
  if (added < MIN_ROWS) return;
  const { rows } = await trx.raw('SELECT reltuples FROM pg_class WHERE oid = ?::regclass', [table]);
  if (added >= Math.max(0, Number(rows[0].reltuples)) * GROWTH) await trx.raw('ANALYZE ??', [table]);
}
