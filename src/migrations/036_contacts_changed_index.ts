import type { Knex } from 'knex';
import { dropLiveContactsIndex, indexLiveContacts } from './030_contacts_list_index.js';

/**
 * A campaign's late walk goes through the audience's contacts changed since its fan-out began, in order
 * of change, a page at a time. Without an index led by (account_id, updated_at) each page sorted every
 * contact of the audience, and an audience imported just before the send (all changed since) was sorted
 * once a page. New generations of the read model get the index from the projection's setup; this adds
 * it to the live one without a rebuild, CONCURRENTLY, as migration 030.
 */
export const config = { transaction: false };

export const up = (knex: Knex) => indexLiveContacts(knex, 'changed', '(account_id, updated_at, id)');
export const down = (knex: Knex) => dropLiveContactsIndex(knex, 'changed');
