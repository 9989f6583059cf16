import { randomBytes } from 'node:crypto';
import type { Db } from './knex.js';

/**
 * A named secret generated once and kept in the database, so every process of a deployment signs
 * with the same key without the operator having to set one.
 */
export async function getOrCreateSecret(db: Db, name: string, given?: string): Promise<string> {
  if (given) return given;
  await db('service_secrets')
    .insert({ name, value: randomBytes(48).toString('base64url') })
    .onConflict('name')
    .ignore();
  const row = await db('service_secrets').where({ name }).first('value');
  return row.value as string;
}
