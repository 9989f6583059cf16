import type { Knex } from 'knex';

/**
 * reserve_send_slots: the daily-cap reservations of many sends in one statement. Item i takes a slot
 * of its per-key scope (when it has one, a NULL scope otherwise) and of its account scope, or neither:
 * 'key' when the key's cap is reached, 'account' when the account's is, else 'ok'. Items are decided
 * in array order against counts that include the earlier items, exactly as if they had come one by
 * one. Every counter the call touches is created if missing and locked in scope order, so concurrent
 * calls never wait on each other in a cycle; each counter row is written once per call.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION reserve_send_slots(p_day date, p_key_scopes text[], p_key_caps int[], p_account_scopes text[], p_account_caps int[])
    RETURNS text[] LANGUAGE plpgsql AS $$
    DECLARE
      scopes text[];
      counts int[];
      before int[];
      outcomes text[] := '{}';
      k int;
      a int;
    BEGIN
      SELECT array_agg(DISTINCT s ORDER BY s) INTO scopes FROM unnest(p_key_scopes || p_account_scopes) AS s WHERE s IS NOT NULL;
      INSERT INTO send_counters (scope, day, count) SELECT s, p_day, 0 FROM unnest(scopes) AS s ORDER BY s ON CONFLICT DO NOTHING;
      SELECT array_agg(c.count ORDER BY c.scope) INTO counts
      FROM (SELECT scope, count FROM send_counters WHERE day = p_day AND scope = ANY (scopes) ORDER BY scope FOR UPDATE) c;
      before := counts;
      FOR i IN 1 .. coalesce(array_length(p_account_scopes, 1), 0) LOOP
        a := array_position(scopes, p_account_scopes[i]);
        k := CASE WHEN p_key_scopes[i] IS NULL THEN NULL ELSE array_position(scopes, p_key_scopes[i]) END;
        IF k IS NOT NULL AND NOT (counts[k] < p_key_caps[i]) THEN
          outcomes := outcomes || 'key'::text;
        ELSIF NOT (counts[a] < p_account_caps[i]) THEN
          outcomes := outcomes || 'account'::text;
        ELSE
          counts[a] := counts[a] + 1;
          IF k IS NOT NULL THEN counts[k] := counts[k] + 1; END IF;
          outcomes := outcomes || 'ok'::text;
        END IF;
      END LOOP;
      UPDATE send_counters c SET count = n.count
      FROM unnest(scopes, counts, before) AS n (scope, count, before)
      WHERE c.scope = n.scope AND c.day = p_day AND n.count <> n.before;
      RETURN outcomes;
    END $$;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP FUNCTION reserve_send_slots(date, text[], int[], text[], int[])');
}
