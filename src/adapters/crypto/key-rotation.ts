import type { Db } from '../db/knex.js';
import { createMasterKey, derivedPersonHashKey, PERSON_HASH_KEY_ID } from './master-key.js';

export interface RotationReport {
  /** keys re-wrapped under the new key by this run */
  rewrapped: number;
  /** keys this run found wrapped under the new key already (a resumed or repeated run) */
  already: number;
  /** keys neither key opens (left as they are; the verifier is then not switched) */
  unreadable: number;
  /** whether the stored verifier now names the new key: a start with the old key alone is refused */
  switched: boolean;
}

export class RotationRefused extends Error {}

/**
 * Re-wraps every data key from `previous` to `next` (ENCRYPTION_KEY_PREVIOUS → ENCRYPTION_KEY), in
 * batches of `batch` keys in id order, each batch one statement. Resumable and idempotent: a key the
 * new key already opens is left, so a stopped run is simply run again. The address-hashing key is
 * stored first (wrapped under the new key, as derived from the key the data was written with), and the
 * verifier switched last, once every key opens under the new key: a run that stops in between leaves a
 * database that the old key (with or without the new one) still opens.
 */
export async function rotateKeyEncryptionKey(
  db: Db,
  keys: { next: Buffer; previous: Buffer },
  options: { batch?: number; onBatch?: (done: number) => void } = {},
): Promise<RotationReport> {
  const next = createMasterKey(keys.next);
  const previous = createMasterKey(keys.previous);
  const verifier = await db('data_key_verifier').where({ id: 1 }).first('value');
  if (verifier && !next.verifies(verifier.value) && !previous.verifies(verifier.value)) {
    throw new RotationRefused('ENCRYPTION_KEY_PREVIOUS is not the key the stored personal data was encrypted with (nor is ENCRYPTION_KEY): nothing was changed.');
  }
  await db('data_keys')
    .insert({ id: PERSON_HASH_KEY_ID, account_id: '', person: '', scope: 'person-hash', wrapped: next.wrap(PERSON_HASH_KEY_ID, derivedPersonHashKey(keys.previous)) })
    .onConflict('id')
    .ignore();

  const report: RotationReport = { rewrapped: 0, already: 0, unreadable: 0, switched: false };
  const size = options.batch ?? 1000;
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const rows: { id: string; wrapped: Buffer }[] = await db('data_keys').where('id', '>', after).orderBy('data_keys.id').limit(size).select(db.raw('id::text AS id'), 'wrapped');
    if (rows.length === 0) break;
    after = rows[rows.length - 1].id;
    const changed: { id: string; wrapped: Buffer }[] = [];
    for (const row of rows) {
      if (next.unwrap(row.id, row.wrapped)) {
        report.already++;
        continue;
      }
      const key = previous.unwrap(row.id, row.wrapped);
      if (key) changed.push({ id: row.id, wrapped: next.wrap(row.id, key) });
      else report.unreadable++;
    }
    if (changed.length) {
      await db.raw('UPDATE data_keys d SET wrapped = u.wrapped FROM unnest(?::uuid[], ?::bytea[]) AS u(id, wrapped) WHERE d.id = u.id', [
        changed.map((c) => c.id),
        changed.map((c) => c.wrapped),
      ]);
      report.rewrapped += changed.length;
    }
    options.onBatch?.(report.rewrapped + report.already + report.unreadable);
  }
  if (report.unreadable === 0) {
    await db('data_key_verifier').insert({ id: 1, value: next.verifier() }).onConflict('id').merge();
    report.switched = true;
  }
  return report;
}
