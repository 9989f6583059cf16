import type { Knex } from 'knex';
import { dropLiveContactsIndex, indexLiveContacts } from './030_contacts_list_index.js';

/**
 * A campaign to all of an account's contacts (an audience with neither list nor tag) walks them in id
 * order a page at a time. No index led with (account_id, id): each page either sorted every contact of
 * the account or walked the primary key past other accounts' contacts. New generations of the read
 * model get the index from the projection's setup; this adds it to the live one without a rebuild.
 *
 * Outside a transaction, CONCURRENTLY, as migration 030: a plain CREATE INDEX blocks the read model's
 * writes and holds a transaction id for the whole build, which stalls the event store's readers.
 */
export const config = { transaction: false };

export const up = (knex: Knex) => indexLiveContacts(knex, 'audience', '(account_id, id)');
export const down = (knex: Knex) => dropLiveContactsIndex(knex, 'audience');
