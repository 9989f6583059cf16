import type { Knex } from 'knex';
import { APPEND_EVENTS_WITH_NOTIFY } from './001_event_store.js';

/**
 * append_events without its NOTIFY. A NOTIFY in a transaction takes a database-wide lock at commit
 * and keeps it through the WAL flush, so every append committed one after another (measured: about
 * half the appends waiting on that lock, the rest on WALSync, ~540 appends/s whatever the
 * concurrency). The event store now notifies after commit, outside the append's transaction, and
 * coalesces notifications (src/adapters/eventstore/postgres-event-store.ts); readers still poll, so
 * a missed notification only delays them.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE OR REPLACE FUNCTION append_events(
      p_stream text, p_expected text, p_ids uuid[], p_types text[], p_versions int[], p_data jsonb[], p_meta jsonb[]
    ) RETURNS TABLE (last_revision bigint, last_tx_id text, last_position bigint, conflict text)
    LANGUAGE plpgsql AS $$
    DECLARE
      n int := coalesce(array_length(p_ids, 1), 0);
      already int;
      rev bigint;
      cur bigint;
    BEGIN
      IF n = 0 THEN
        RAISE EXCEPTION 'append needs at least one event' USING ERRCODE = 'invalid_parameter_value';
      END IF;
      SELECT count(*) INTO already FROM events e WHERE e.event_id = ANY (p_ids);
      IF already > 0 THEN
        IF already = n AND NOT EXISTS (SELECT 1 FROM events e WHERE e.event_id = ANY (p_ids) AND e.stream_id <> p_stream) THEN
          RETURN QUERY SELECT e.revision, e.tx_id::text, e.global_position, NULL::text FROM events e
            WHERE e.event_id = ANY (p_ids) ORDER BY e.revision DESC LIMIT 1;
          RETURN;
        END IF;
        RAISE EXCEPTION 'some of these event ids were already appended elsewhere' USING ERRCODE = 'CR422';
      END IF;

      IF p_expected = 'any' THEN
        INSERT INTO streams AS s VALUES (p_stream, n - 1)
          ON CONFLICT (stream_id) DO UPDATE SET revision = s.revision + n RETURNING s.revision INTO rev;
      ELSIF p_expected = 'no_stream' THEN
        INSERT INTO streams VALUES (p_stream, n - 1) ON CONFLICT DO NOTHING RETURNING revision INTO rev;
      ELSIF p_expected = 'stream_exists' THEN
        UPDATE streams s SET revision = s.revision + n WHERE s.stream_id = p_stream RETURNING s.revision INTO rev;
      ELSE
        UPDATE streams s SET revision = s.revision + n
          WHERE s.stream_id = p_stream AND s.revision = p_expected::bigint RETURNING s.revision INTO rev;
      END IF;
      IF rev IS NULL THEN
        SELECT s.revision INTO cur FROM streams s WHERE s.stream_id = p_stream;
        RETURN QUERY SELECT NULL::bigint, NULL::text, NULL::bigint, coalesce(cur::text, 'no_stream');
        RETURN;
      END IF;

      INSERT INTO events (stream_id, revision, event_id, type, schema_version, data, metadata)
        SELECT p_stream, rev - n + t.ord, t.id, t.type, t.sv, t.data, t.meta
        FROM unnest(p_ids, p_types, p_versions, p_data, p_meta) WITH ORDINALITY AS t (id, type, sv, data, meta, ord)
        ORDER BY t.ord;
      RETURN QUERY SELECT rev, pg_current_xact_id()::text, currval(pg_get_serial_sequence('events', 'global_position')), NULL::text;
    END $$;
  `);
}

/** Restores the version of 001 that notifies inside the append. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw(APPEND_EVENTS_WITH_NOTIFY);
}
