import { FORMER_PERSONAL_IDS } from '../domain/provider-events/provider-event-ids.js';

/**
 * A jsonb expression (and its bindings) to append (`||`) to a row's `data`: its `providerEventId` as
 * `withoutPersonalPart` reads it, or nothing when it has none. Rows written before this version may
 * hold an id that ends with the recipient's address or a clicked link; an erasure or retention takes
 * that part off where it nulls the rest, and a rebuild, reading the events through the sealing store,
 * writes the same.
 */
export function formerIdsWithoutPersonalPart(): { sql: string; bindings: string[] } {
  const id = "data->>'providerEventId'";
  const cases = FORMER_PERSONAL_IDS.map(() => `WHEN ${id} ~ ? THEN regexp_replace(${id}, ?, ?)`).join(' ');
  return {
    sql: `CASE WHEN jsonb_typeof(data->'providerEventId') = 'string' THEN jsonb_build_object('providerEventId', CASE ${cases} ELSE ${id} END) ELSE '{}'::jsonb END`,
    bindings: FORMER_PERSONAL_IDS.flatMap((pattern) => [pattern, pattern, '\\1']),
  };
}
