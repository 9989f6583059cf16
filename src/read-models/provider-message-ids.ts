import type { Db } from '../adapters/db/knex.js';

/** Our message id for a provider's message id, or null when none is known (yet). */
export const messageIdForProvider = (db: Db, providerMessageId: string): Promise<string | null> =>
  db('provider_message_ids')
    .where({ provider_message_id: providerMessageId })
    .first('message_id')
    .then((row) => row?.message_id ?? null);

/** Parked provider events (`unmatched_provider_events`) whose provider message id has become known, with our message id. */
export const parkedEventsNowMatched = (db: Db, limit: number): Promise<{ provider_event_id: string; payload: unknown; message_id: string }[]> =>
  db('unmatched_provider_events as u')
    .join('provider_message_ids as p', 'p.provider_message_id', 'u.provider_message_id')
    .select('u.provider_event_id', 'u.payload', 'p.message_id')
    .limit(limit);
