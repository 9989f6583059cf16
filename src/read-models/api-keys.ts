import { query, type Db } from '../adapters/db/knex.js';
import type { StoredKey } from '../domain/accounts/key-check.js';
import type { Scope } from '../domain/principal.js';

/**
 * What a statement that looks a presented key up reads of it (`keyColumnsSql`): all null when no key
 * has the presented hash. The checks themselves are keyRefusal's (src/domain/accounts/key-check.ts),
 * so a statement doing work of its own (the send API's admission) reads the key beside its other
 * facts, and the key is judged exactly as every other request's.
 */
export interface CheckedKeyRow {
  id: string | null;
  account_id: string | null;
  scopes: Scope[] | null;
  daily_limit: number | null;
  revoked_at: Date | null;
  expires_at: Date | null;
  ip_allowlist: string[] | null;
}

/** The api_keys columns a key check reads, for the api_keys row `k`. */
export const keyColumnsSql = (k: string) =>
  `${k}.id, ${k}.account_id, ${k}.scopes, ${k}.daily_limit, ${k}.revoked_at, ${k}.expires_at, ${k}.ip_allowlist`;

/** The row as keyRefusal takes it: null when no key has the presented hash. */
export function storedKey(row: CheckedKeyRow): StoredKey | null {
  if (row.id === null) return null;
  return { revokedAt: row.revoked_at, expiresAt: row.expires_at, ipAllowlist: row.ip_allowlist ?? [], scopes: row.scopes ?? [] };
}

const KEY_LOOKUP = `
  SELECT r.i, ${keyColumnsSql('k')}
  FROM unnest($1::text[]) WITH ORDINALITY AS r (key_hash, i)
  LEFT JOIN api_keys k ON k.key_hash = r.key_hash
  ORDER BY r.i`;

/** The keys with these SHA-256 hashes, one row per hash in their order (all null for an unknown hash): one indexed read. */
export const keysByHash = (db: Db, hashes: string[]) => query<CheckedKeyRow>(db, KEY_LOOKUP, [hashes], 'api_key_lookup');

/** An account's keys, newest first, each with when it was last used. */
export const apiKeysOf = (db: Db, accountId: string): Promise<Record<string, any>[]> =>
  db('api_keys as k').leftJoin('api_key_usage as u', 'u.api_key_id', 'k.id').where('k.account_id', accountId).orderBy('k.created_at', 'desc').select('k.*', 'u.last_used_at');

/** The hashes of every key an account has had, revoked and expired ones too. */
export const keyHashesOf = (db: Db, accountId: string): Promise<string[]> => db('api_keys').where({ account_id: accountId }).pluck('key_hash');

/** Records when a key was last used (kept beside the keys, not in the log: a write per use would be an event per request). */
export const recordKeyUsed = (db: Db, apiKeyId: string, at: Date): Promise<unknown> =>
  db('api_key_usage').insert({ api_key_id: apiKeyId, last_used_at: at }).onConflict('api_key_id').merge();
