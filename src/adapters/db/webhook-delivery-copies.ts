import type { Knex } from 'knex';
import { DELIVER_WEBHOOK_JOB, withoutBodyOf } from '../../domain/webhooks/delivery.js';
import type { JobQueue } from '../../ports/job-queue.js';

/**
 * Drops the bodies of a person's webhook deliveries from the side effects and the PostgreSQL queue's
 * jobs (and their archive) that carry them, an erasure's part outside the log: the log's copy is
 * sealed, these are not. Their ordering key ends with the person's keyed hash, or, for deliveries
 * scheduled before sealing, with their address: `names` gives both. (BullMQ keeps its finished jobs
 * in Redis for a bounded count: see docs/privacy.md.)
 */
export async function forgetDeliveryBodies(db: Knex, names: readonly string[], queueSchema = 'pgboss', queue?: Pick<JobQueue, 'redact'>): Promise<void> {
  const keys = names.map((name) => `%:${name.replace(/[\\%_]/g, (c) => `\\${c}`)}`);
  const nulled = `jsonb_set(payload, '{schedule,body}', 'null'::jsonb)`;
  await db('side_effects')
    .where('kind', DELIVER_WEBHOOK_JOB)
    .andWhere('ordering_key', 'like', db.raw('ANY(?)', [keys]))
    .andWhereRaw("jsonb_exists(payload->'schedule', 'body')")
    .update({ payload: db.raw(nulled) });
  for (const table of ['job', 'archive']) {
    const name = `${queueSchema}.${table}`;
    if (!(await db.raw('SELECT to_regclass(?) AS t', [name])).rows[0].t) continue;
    await db.raw(
      `UPDATE ${name} SET data = jsonb_set(data, '{schedule,body}', 'null'::jsonb)
       WHERE name = ? AND data->'schedule'->>'orderingKey' LIKE ANY(?) AND jsonb_exists(data->'schedule', 'body')`,
      [DELIVER_WEBHOOK_JOB, keys],
    );
  }
  // BullMQ's jobs are in Redis: waiting, delayed and failed ones are rewritten there
  await queue?.redact?.(DELIVER_WEBHOOK_JOB, (data) => withoutBodyOf(data, names));
}
