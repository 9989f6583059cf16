import type { Knex } from 'knex';
import type { Db } from './knex.js';

/**
 * Deletes what is kept of some messages outside the event log: the attachment bytes
 * (`attachment_contents`, ids `<messageId>/<position>`) and what the sandbox providers recorded. An
 * erasure or retention's part beside destroying keys: these copies are not sealed. `messages` selects
 * the messages' ids from the messages read model.
 */
async function forgetMessageCopies(db: Db, messages: () => Knex.QueryBuilder): Promise<void> {
  const ids = messages();
  await db.raw(`DELETE FROM attachment_contents WHERE split_part(id, '/', 1) IN (${ids.toQuery()})`);
  await db('sandbox_emails').whereIn('message_id', messages()).delete();
  await db('sandbox_sms').whereIn('message_id', messages()).delete();
}

/** A person's messages (an erasure). */
export const forgetPersonMessageCopies = (db: Db, accountId: string, person: string) =>
  forgetMessageCopies(db, () => db('messages').where({ account_id: accountId, person }).select('id'));

/** An account's messages queued before the UTC day `before` (retention). */
export const forgetExpiredMessageCopies = (db: Db, accountId: string, before: string) =>
  forgetMessageCopies(db, () => db('messages').where({ account_id: accountId }).andWhere('created_at', '<', `${before}T00:00:00.000Z`).select('id'));
