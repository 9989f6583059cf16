import { query, type Db } from '../db/knex.js';
import type { KeyStore } from '../../ports/key-store.js';

const STORE = `
  INSERT INTO data_keys (id, account_id, person, scope, wrapped)
  SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::bytea[])`;

/**
 * The key store on the service's PostgreSQL (tables of migrations 021 and 022). `writer`, when given,
 * stores new keys: a connection with synchronous_commit off saves the send path a WAL flush per batch
 * of keys, and loses nothing when the events sealed under them are appended to the same PostgreSQL
 * after the keys' commit: their commit flushes the WAL up to itself, the keys' commit included.
 */
export function createPgKeyStore(db: Db, writer: Db = db): KeyStore {
  return {
    async store(keys) {
      if (keys.length === 0) return;
      await query(writer, STORE, [keys.map((k) => k.id), keys.map((k) => k.accountId), keys.map((k) => k.person), keys.map((k) => k.scope), keys.map((k) => k.wrapped)], 'store_data_keys');
    },

    async find(ids) {
      if (ids.length === 0) return new Map();
      const rows = await query<{ id: string; wrapped: Buffer }>(db, 'SELECT id::text, wrapped FROM data_keys WHERE id = ANY($1::uuid[])', [ids]);
      return new Map(rows.map((r) => [r.id, r.wrapped]));
    },

    async erase(accountId, person) {
      await db.transaction(async (trx) => {
        await trx('erased_people').insert({ account_id: accountId, person }).onConflict(['account_id', 'person']).ignore();
        await trx('data_keys').where({ account_id: accountId, person }).delete();
      });
    },

    async holds(accountId, person) {
      return Boolean(await db('data_keys').where({ account_id: accountId, person }).first('id'));
    },

    async erased(people) {
      if (people.length === 0) return new Set();
      const rows = await db('erased_people')
        .whereIn(['account_id', 'person'], people.map((p) => [p.accountId, p.person]))
        .select('account_id', 'person');
      return new Set(rows.map((r) => `${r.account_id}\n${r.person}`));
    },

    async destroyBefore(accountId, day) {
      // Day scopes sort as text; `profile` sorts after every digit, so it is never taken.
      return db('data_keys').where({ account_id: accountId }).andWhere('scope', '<', day).andWhereRaw("scope ~ '^[0-9]{4}-'").delete();
    },

    async verifier(proposed) {
      await db('data_key_verifier').insert({ id: 1, value: proposed }).onConflict('id').ignore();
      return (await db('data_key_verifier').where({ id: 1 }).first('value')).value as string;
    },

    async holdsKeys() {
      const row = await db.raw('SELECT EXISTS (SELECT 1 FROM data_key_verifier) OR EXISTS (SELECT 1 FROM data_keys) OR EXISTS (SELECT 1 FROM erased_people) AS holds');
      return Boolean(row.rows[0].holds);
    },
  };
}
