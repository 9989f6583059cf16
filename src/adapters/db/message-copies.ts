import type { Knex } from 'knex';
import type { Db } from './knex.js';
import { erasedPerson } from '../../domain/privacy/personal-data.js';

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
  forgetMessageCopies(db, () => db('messages').where({ account_id: accountId }).whereIn('person', [person, erasedPerson(person)]).select('id'));

/** An account's messages queued before the UTC day `before` (retention). */
export const forgetExpiredMessageCopies = (db: Db, accountId: string, before: string) =>
  forgetMessageCopies(db, () => db('messages').where({ account_id: accountId }).andWhere('created_at', '<', `${before}T00:00:00.000Z`).select('id'));

/**
 * Provider events parked until their message is known (`unmatched_provider_events`) hold the
 * provider's payload in clear: the recipient, a bounce's diagnostic, a click's URL. An erasure deletes
 * the person's (they name no account: the parked events of the address, whichever account's message
 * they will turn out to be about): by the keyed hash they are parked under, and those parked before
 * rows had one by the address in their payload.
 */
export const forgetPersonParkedProviderEvents = (db: Db, person: string, address: string) =>
  db('unmatched_provider_events')
    .where({ person })
    .orWhere((parkedBefore) => parkedBefore.whereNull('person').andWhereRaw('strpos(lower(payload::text), ?) > 0', [address.toLowerCase()]))
    .delete();

/**
 * What retention deletes beside the keys for an account and the UTC day `before`: the copies of its
 * older messages, and the parked provider events received before that day. Those name no account, so
 * the shortest retention of any account applies to all (a parked event matches its message within
 * seconds, and is dropped unmatched after seven days in any case).
 */
export async function forgetExpiredCopies(db: Db, accountId: string, before: string): Promise<void> {
  await forgetExpiredMessageCopies(db, accountId, before);
  await db('unmatched_provider_events').where('received_at', '<', `${before}T00:00:00.000Z`).delete();
}
