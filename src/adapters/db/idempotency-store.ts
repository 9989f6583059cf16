import type { IdempotencyState } from '../../domain/idempotency/record.js';
import { withoutAddressInJson } from '../../domain/privacy/erased-address.js';
import type { IdempotencyStore } from '../../ports/idempotency-store.js';
import { createGroupCommit } from '../../group-commit.js';
import { query, type Db } from './knex.js';

interface Row {
  fingerprint: string;
  status: 'in_flight' | 'completed';
  token: string;
  seed: string;
  claimed_at: Date;
  held_since: Date;
  response_status: number | null;
  response_body: unknown;
}

function toState(row: Row | undefined): IdempotencyState {
  if (!row) return { status: 'absent' };
  const claim = {
    fingerprint: row.fingerprint,
    token: row.token,
    seed: row.seed,
    claimedAt: row.claimed_at.toISOString(),
    heldSince: row.held_since.toISOString(),
  };
  return row.status === 'completed'
    ? { status: 'completed', ...claim, response: { status: row.response_status!, body: row.response_body } }
    : { status: 'in_flight', ...claim };
}

const values = (s: Exclude<IdempotencyState, { status: 'absent' }>): unknown[] => [
  s.fingerprint,
  s.status,
  s.token,
  s.seed,
  s.claimedAt,
  s.heldSince,
  s.status === 'completed' ? s.response.status : null,
  s.status === 'completed' ? JSON.stringify(s.response.body) : null,
];

// New claims, all of those arriving together in one statement: one that loses to a concurrent claim
// (or finds an old row) writes nothing, and its caller reads what is there and decides again.
const INSERT = `
  INSERT INTO idempotency_keys (scope, key, fingerprint, status, token, seed, claimed_at, held_since, response_status, response_body)
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::timestamptz[], $9::int[], $10::json[])
  ON CONFLICT (scope, key) DO NOTHING
  RETURNING token`;
// Writes over records still held as expected (same holder token and status), all arriving together.
const UPDATE = `
  UPDATE idempotency_keys t
  SET fingerprint = u.fingerprint, status = u.status, token = u.token, seed = u.seed, claimed_at = u.claimed_at,
      held_since = u.held_since, response_status = u.response_status, response_body = u.response_body
  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::timestamptz[], $9::int[], $10::json[], $11::text[], $12::text[])
    WITH ORDINALITY AS u (scope, key, fingerprint, status, token, seed, claimed_at, held_since, response_status, response_body, expected_token, expected_status, i)
  WHERE t.scope = u.scope AND t.key = u.key AND t.token = u.expected_token AND t.status = u.expected_status
  RETURNING u.i`;
const DELETE = `DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND token = $3 AND status = $4 RETURNING 1 AS ok`;
const SELECT = `
  SELECT fingerprint, status, token, seed, claimed_at, held_since, response_status, response_body
  FROM idempotency_keys WHERE scope = $1 AND key = $2`;

// An address is ASCII, which JSON writes as it is: the answers quoting it hold it in their text.
const MENTIONING = `
  SELECT scope, key, token, response_body::text AS body FROM idempotency_keys
  WHERE scope = ANY($1::text[]) AND status = 'completed' AND strpos(lower(response_body::text), $2) > 0`;
// only the record as it was read: one claimed again since (past its day) holds another answer
const REDACT = `UPDATE idempotency_keys SET response_body = $4::json WHERE scope = $1 AND key = $2 AND token = $3 AND status = 'completed' RETURNING 1 AS ok`;

type Present = Exclude<IdempotencyState, { status: 'absent' }>;
interface Write {
  scope: string;
  key: string;
  next: Present;
  expected?: Present;
}

/** values() of each write, column by column, for unnest */
const columns = (writes: Write[]) => {
  const rows = writes.map((w) => [w.scope, w.key, ...values(w.next)]);
  return rows[0].map((_, c) => rows.map((r) => r[c]));
};

/**
 * Idempotency-Key records in PostgreSQL: each write a single conditional statement, so no lock is held
 * across a request; the claims and completions of concurrent requests go out together (group commit),
 * which keeps a keyed send from queueing for connections behind its own bookkeeping.
 */
export function createPgIdempotencyStore(db: Db): IdempotencyStore {
  const inserts = createGroupCommit<Write, boolean>(async (writes) => {
    const won = new Set((await query<{ token: string }>(db, INSERT, columns(writes), 'idempotency_insert')).map((r) => r.token));
    return writes.map((w) => won.has(w.next.token));
  });
  const updates = createGroupCommit<Write, boolean>(async (writes) => {
    const args = [...columns(writes), writes.map((w) => w.expected!.token), writes.map((w) => w.expected!.status)];
    const done = new Set((await query<{ i: string }>(db, UPDATE, args, 'idempotency_update')).map((r) => Number(r.i)));
    return writes.map((_, i) => done.has(i + 1));
  });

  return {
    async load(scope, key) {
      const [row] = await query<Row>(db, SELECT, [scope, key], 'idempotency_load');
      return toState(row);
    },

    async replace(scope, key, expected, next) {
      if (expected.status === 'absent') {
        if (next.status === 'absent') return true;
        return inserts.add({ scope, key, next });
      }
      if (next.status === 'absent') {
        return (await query(db, DELETE, [scope, key, expected.token, expected.status], 'idempotency_delete')).length === 1;
      }
      return updates.add({ scope, key, next, expected });
    },

    async sweep(before) {
      return (await query(db, 'DELETE FROM idempotency_keys WHERE claimed_at < $1 RETURNING 1', [before])).length;
    },

    async forgetAddress(scopes, address) {
      if (scopes.length === 0) return 0;
      const rows = await query<{ scope: string; key: string; token: string; body: string }>(db, MENTIONING, [scopes, address.trim().toLowerCase()]);
      let changed = 0;
      for (const row of rows) {
        const body = withoutAddressInJson(row.body, address);
        if (body !== row.body) changed += (await query(db, REDACT, [row.scope, row.key, row.token, body])).length;
      }
      return changed;
    },
  };
}
