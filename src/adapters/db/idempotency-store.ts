import type { IdempotencyState } from '../../domain/idempotency/record.js';
import type { IdempotencyStore } from '../../ports/idempotency-store.js';
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

const values = (s: Exclude<IdempotencyState, { status: 'absent' }>) => [
  s.fingerprint,
  s.status,
  s.token,
  s.seed,
  s.claimedAt,
  s.heldSince,
  s.status === 'completed' ? s.response.status : null,
  s.status === 'completed' ? JSON.stringify(s.response.body) : null,
];

// A new claim: the insert that loses to a concurrent one (or finds an old row) writes nothing, and its
// caller reads what is there and decides again.
const INSERT = `
  INSERT INTO idempotency_keys (scope, key, fingerprint, status, token, seed, claimed_at, held_since, response_status, response_body)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
  ON CONFLICT (scope, key) DO NOTHING
  RETURNING 1 AS ok`;
const UPDATE = `
  UPDATE idempotency_keys
  SET fingerprint = $3, status = $4, token = $5, seed = $6, claimed_at = $7, held_since = $8, response_status = $9, response_body = $10
  WHERE scope = $1 AND key = $2 AND token = $11 AND status = $12
  RETURNING 1 AS ok`;
const DELETE = `DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND token = $3 AND status = $4 RETURNING 1 AS ok`;
const SELECT = `
  SELECT fingerprint, status, token, seed, claimed_at, held_since, response_status, response_body
  FROM idempotency_keys WHERE scope = $1 AND key = $2`;

/** Idempotency-Key records in PostgreSQL: each write a single conditional statement, so no lock is held across a request. */
export function createPgIdempotencyStore(db: Db): IdempotencyStore {
  return {
    async load(scope, key) {
      const [row] = await query<Row>(db, SELECT, [scope, key], 'idempotency_load');
      return toState(row);
    },

    async replace(scope, key, expected, next) {
      if (expected.status === 'absent') {
        if (next.status === 'absent') return true;
        return (await query(db, INSERT, [scope, key, ...values(next)], 'idempotency_insert')).length === 1;
      }
      if (next.status === 'absent') {
        return (await query(db, DELETE, [scope, key, expected.token, expected.status], 'idempotency_delete')).length === 1;
      }
      return (await query(db, UPDATE, [scope, key, ...values(next), expected.token, expected.status], 'idempotency_update')).length === 1;
    },

    async sweep(before) {
      return (await query(db, 'DELETE FROM idempotency_keys WHERE claimed_at < $1 RETURNING 1', [before])).length;
    },
  };
}
