import type { Db } from '../adapters/db/knex.js';
import { pendingPredecessorSql } from '../adapters/db/side-effects.js';
import type { SigningSecrets } from '../domain/webhooks/subscription.js';

/** The columns signingSecretsOf reads. */
export const SIGNING_SECRET_COLUMNS = ['secret', 'next_secret', 'next_secret_at'];

/** The secrets of a subscription's row: which signs when is the domain's rule (signingSecret). */
export const signingSecretsOf = (row: Record<string, any>): SigningSecrets => ({
  secret: row.secret,
  next: row.next_secret ?? null,
  nextAt: row.next_secret_at ? new Date(row.next_secret_at).toISOString() : null,
});

/** One of an account's webhook subscriptions (these columns of it), or undefined. */
export const webhookRow = (db: Db, accountId: string, id: string, columns: string[] = ['*']): Promise<Record<string, any> | undefined> =>
  db('webhooks').where({ id, account_id: accountId }).first(columns);

/** An account's subscriptions, oldest first. */
export const webhooksOf = (db: Db, accountId: string): Promise<Record<string, any>[]> => db('webhooks').where({ account_id: accountId }).orderBy('created_at');

/** Every subscription of these accounts, with the events it takes. */
export const webhooksOfAccounts = (db: Db, accountIds: string[]): Promise<{ id: string; account_id: string; events: string[] }[]> =>
  db('webhooks').whereIn('account_id', accountIds).select('id', 'account_id', 'events');

/**
 * For attempts running side by side, in one round trip: whether an earlier delivery to the same
 * endpoint and contact is unfinished (the outbox), and where to send (the subscription, if it still exists).
 */
export async function deliveryTargets(db: Db, items: { effectId: string; subscriptionId: string }[]) {
  const { rows } = await db.raw(
    `SELECT ${pendingPredecessorSql('r.effect_id')} AS blocked, w.url, w.secret, w.next_secret, w.next_secret_at
     FROM unnest(?::text[], ?::text[]) WITH ORDINALITY AS r (effect_id, subscription_id, i)
     LEFT JOIN webhooks w ON w.id = r.subscription_id
     ORDER BY r.i`,
    [items.map((t) => t.effectId), items.map((t) => t.subscriptionId)],
  );
  return rows.map((r: { blocked: boolean; url: string | null; secret: string }) => ({
    blocked: r.blocked,
    subscription: r.url === null ? undefined : { url: r.url, secrets: signingSecretsOf(r) },
  }));
}
