import type { Db } from '../adapters/db/knex.js';

/** Our message id for a provider's message id, or null when none is known (yet). */
export const messageIdForProvider = (db: Db, providerMessageId: string): Promise<string | null> =>
  db('provider_message_ids')
    .where({ provider_message_id: providerMessageId })
    .first('message_id')
    .then((row) => row?.message_id ?? null);
