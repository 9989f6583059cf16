import type { Db } from '../adapters/db/knex.js';

/** Failed deliveries stay listed this long (14 days, docs/webhooks.md), then are purged from the read model. */
export const FAILED_DELIVERY_RETENTION_MS = 14 * 24 * 3600 * 1000;

/**
 * Drops failed deliveries older than the retention from the read model (the delivery streams keep
 * them). `now` is a parameter so the 14 days can be tested without waiting for them.
 */
export async function purgeFailedDeliveries(db: Db, now = new Date()): Promise<number> {
  return db('webhook_deliveries')
    .where({ status: 'failed' })
    .andWhere('updated_at', '<', new Date(now.getTime() - FAILED_DELIVERY_RETENTION_MS))
    .delete();
}

/** One of an account's deliveries (these columns of it), or undefined; purged ones are gone. */
export const deliveryRow = (db: Db, accountId: string, id: string, columns: string[] = ['*']): Promise<Record<string, any> | undefined> =>
  db('webhook_deliveries').where({ id, account_id: accountId }).first(columns);

/**
 * A page of a subscription's deliveries, newest first, after `after` (a page end: created_at as text,
 * id), of one status when asked, without failed ones past the retention not purged yet.
 */
export function deliveriesPage(
  db: Db,
  accountId: string,
  subscriptionId: string,
  q: { status?: string; after?: [createdAt: string, id: string]; limit: number },
): Promise<Record<string, any>[]> {
  const rows = db('webhook_deliveries')
    .where({ subscription_id: subscriptionId, account_id: accountId })
    .andWhere((w) => w.whereNot('status', 'failed').orWhere('updated_at', '>', new Date(Date.now() - FAILED_DELIVERY_RETENTION_MS)))
    .select('*', db.raw('json_build_array(created_at::text, id) AS after'));
  if (q.status) rows.andWhere('status', q.status);
  if (q.after) rows.andWhereRaw('(created_at, id) < (?, ?)', q.after);
  return rows.orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(q.limit);
}
