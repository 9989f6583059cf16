import type { Knex } from 'knex';

/** The first append_events; migration 013 replaces it with one that does not notify, and its down restores this. */
export const APPEND_EVENTS_WITH_NOTIFY = `
    -- One round trip per append: idempotency check, optimistic revision check, insert, notify.
    -- A revision conflict is an answer, not an error (errors cost a server log write each): the row
    -- then has only conflict = the actual revision or 'no_stream', and nothing was written.
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
      PERFORM pg_notify('events', '');
      RETURN QUERY SELECT rev, pg_current_xact_id()::text, currval(pg_get_serial_sequence('events', 'global_position')), NULL::text;
    END $$;
`;

/**
 * The append-only event log. `tx_id` (the writing transaction's id) gives subscribers a commit-safe
 * order: see src/adapters/eventstore/postgres-event-store.ts.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE streams (
      stream_id text PRIMARY KEY,
      revision  bigint NOT NULL
    );
    CREATE TABLE events (
      global_position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      tx_id           xid8 NOT NULL DEFAULT pg_current_xact_id(),
      stream_id       text NOT NULL,
      revision        bigint NOT NULL,
      event_id        uuid NOT NULL UNIQUE,
      type            text NOT NULL,
      schema_version  int NOT NULL DEFAULT 1,
      data            jsonb NOT NULL,
      metadata        jsonb NOT NULL DEFAULT '{}',
      recorded_at     timestamptz NOT NULL DEFAULT now(),
      UNIQUE (stream_id, revision)
    );
    CREATE INDEX events_commit_order ON events (tx_id, global_position);

    CREATE FUNCTION events_are_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'events are append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
    END $$;
    CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events
      FOR EACH ROW EXECUTE FUNCTION events_are_append_only();
    CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
      FOR EACH STATEMENT EXECUTE FUNCTION events_are_append_only();

    ${APPEND_EVENTS_WITH_NOTIFY}
  `);
}

export async function down(): Promise<void> {
  throw new Error('the event log is never rolled back');
}
