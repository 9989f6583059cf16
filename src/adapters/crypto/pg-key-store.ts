import { query, type Db } from '../db/knex.js';
import type { KeySlot, KeyStore, WrappedKey } from '../../ports/key-store.js';

// Inserts the proposed keys of slots that have none (the first proposal of a slot named twice in one
// batch wins) and answers every slot's key, in input order: one round trip for a batch of sends.
const OBTAIN = `
  WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::bytea[])
      WITH ORDINALITY AS t(id, account_id, person, scope, wrapped, i)
  ),
  inserted AS (
    INSERT INTO data_keys (id, account_id, person, scope, wrapped)
    SELECT DISTINCT ON (account_id, person, scope) id, account_id, person, scope, wrapped FROM input ORDER BY account_id, person, scope, i
    ON CONFLICT (account_id, person, scope) DO NOTHING
    RETURNING id, account_id, person, scope, wrapped
  )
  SELECT coalesce(n.id, k.id)::text AS id, coalesce(n.wrapped, k.wrapped) AS wrapped
  FROM input i
  LEFT JOIN inserted n ON n.account_id = i.account_id AND n.person = i.person AND n.scope = i.scope
  LEFT JOIN data_keys k ON k.account_id = i.account_id AND k.person = i.person AND k.scope = i.scope
  ORDER BY i.i`;

/** The key store on the service's PostgreSQL (tables of migrations 021 and 022). */
export function createPgKeyStore(db: Db): KeyStore {
  return {
    async obtain(slots) {
      const run = (items: (KeySlot & { proposed: WrappedKey })[]) =>
        query<{ id: string | null; wrapped: Buffer | null }>(db, OBTAIN, [
          items.map((s) => s.proposed.id),
          items.map((s) => s.accountId),
          items.map((s) => s.person),
          items.map((s) => s.scope),
          items.map((s) => s.proposed.wrapped),
        ], 'obtain_data_keys');
      let rows = await run(slots);
      // A slot another transaction filled while this statement ran is not in this statement's
      // snapshot: the next statement sees it.
      for (let attempt = 0; rows.some((r) => !r.id) && attempt < 5; attempt++) rows = await run(slots);
      if (rows.some((r) => !r.id)) throw new Error('a data key could not be stored');
      return rows.map((r) => ({ id: r.id!, wrapped: r.wrapped! }));
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
      const row = await db.raw("SELECT EXISTS (SELECT 1 FROM data_keys) OR EXISTS (SELECT 1 FROM erased_people) AS holds");
      return Boolean(row.rows[0].holds);
    },
  };
}
