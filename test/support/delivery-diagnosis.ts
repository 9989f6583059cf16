import type { Knex } from 'knex';

/**
 * Where the side effects of a database stand, for a test whose delivery did not arrive in time: the
 * effects, the PostgreSQL queue's jobs for them (when that queue is in use) and the process managers'
 * checkpoints. Each part reads as its error when it cannot be read.
 */
export async function deliveryDiagnosis(db: Knex): Promise<string> {
  const read = (q: () => Promise<unknown>) => q().catch((err: unknown) => String(err));
  const effects = await read(() => db('side_effects').select('id', 'kind', 'status', 'run_after', 'claimed_until', 'created_at', 'done_at'));
  const jobs = await read(async () =>
    (await db.raw(`SELECT to_regclass('pgboss.job') AS t`)).rows[0].t
      ? (await db.raw(`SELECT name, state, retry_count, start_after, started_on, completed_on, data->>'sideEffectId' AS effect FROM pgboss.job`)).rows
      : 'no pgboss.job',
  );
  const managers = await read(() => db('process_manager_checkpoints').select());
  return `side effects: ${JSON.stringify(effects)}\njobs: ${JSON.stringify(jobs)}\nmanagers: ${JSON.stringify(managers)}`;
}
