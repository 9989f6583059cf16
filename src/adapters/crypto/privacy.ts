import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { StartupError } from '../../startup-error.js';
import type { EventStore } from '../../ports/event-store.js';
import type { KeyStore, PersonOf } from '../../ports/key-store.js';
import { createDataKeys, type DataKeys } from './data-keys.js';
import { createMasterKey, generateMasterKeyText, parseMasterKey, PERSON_HASH_KEY_ID, type MasterKey } from './master-key.js';
import { createSealingEventStore } from './sealing-event-store.js';

export interface Privacy {
  master: MasterKey;
  store: KeyStore;
  keys: DataKeys;
  personOf: PersonOf;
  /** `inner` with personal data sealed under the data keys; `keysWithEvents`: `inner` stores new keys with its events (PostgreSQL, on the key store's database) */
  seal(inner: EventStore, options?: { keysWithEvents?: boolean }): EventStore;
}

export const KEY_FILE = 'encryption.key';

/**
 * The key-encryption key: ENCRYPTION_KEY, else the one kept in DATA_DIR (generated there on first
 * start). A database that already holds data keys is never given a newly generated key: that start
 * stops with one line, as does a key that does not open the stored keys.
 */
async function loadMasterKey(options: { encryptionKey?: string; dataDir: string; store: KeyStore }): Promise<{ key: Buffer; from: string }> {
  if (options.encryptionKey) return { key: parseMasterKey(options.encryptionKey)!, from: 'ENCRYPTION_KEY' };
  const file = join(resolve(options.dataDir), KEY_FILE);
  if (existsSync(file)) {
    const key = parseMasterKey(readFileSync(file, 'utf8'));
    if (!key) throw new StartupError(`${file} does not hold an encryption key (32 bytes, base64): restore it, or set ENCRYPTION_KEY.`);
    return { key, from: `The key in ${file} (ENCRYPTION_KEY is not set)` };
  }
  if (await options.store.holdsKeys()) {
    throw new StartupError(
      `ENCRYPTION_KEY is not set and ${file} does not exist, but the database holds encrypted personal data: set ENCRYPTION_KEY to the key it was written with (processes sharing a database need the same key: set it, or give them the same DATA_DIR).`,
    );
  }
  const text = generateMasterKeyText();
  mkdirSync(resolve(options.dataDir), { recursive: true });
  writeFileSync(file, `${text}\n`, { mode: 0o600, flag: 'wx' });
  return { key: parseMasterKey(text)!, from: `The key generated into ${file}` };
}

/** `previousKey` (ENCRYPTION_KEY_PREVIOUS): during a rotation, the key the data was written with still opens it. */
export async function openPrivacy(options: { encryptionKey?: string; previousKey?: string; dataDir: string; store: KeyStore }): Promise<Privacy> {
  const { key: current, from } = await loadMasterKey(options);
  const previous = options.previousKey ? parseMasterKey(options.previousKey)! : undefined;
  const opener = createMasterKey(current, { previous });
  const stored = await options.store.verifier(opener.verifier());
  if (!opener.verifies(stored)) {
    throw new StartupError(
      previous
        ? 'neither ENCRYPTION_KEY nor ENCRYPTION_KEY_PREVIOUS is the key the stored personal data was encrypted with: set ENCRYPTION_KEY_PREVIOUS to the key it was written with.'
        : `${from} is not the key the stored personal data was encrypted with: set the key it was written with.`,
    );
  }
  const wrappedHashKey = (await options.store.find([PERSON_HASH_KEY_ID])).get(PERSON_HASH_KEY_ID);
  const hashing = wrappedHashKey && opener.unwrap(PERSON_HASH_KEY_ID, wrappedHashKey);
  if (wrappedHashKey && !hashing) throw new StartupError('ENCRYPTION_KEY does not open the stored address-hashing key: finish the key rotation with ENCRYPTION_KEY_PREVIOUS set.');
  const master = createMasterKey(current, { previous, hashing: hashing ?? undefined });
  const keys = createDataKeys({ store: options.store, master });
  return {
    master,
    store: options.store,
    keys,
    personOf: (address) => master.person(address),
    seal: (inner, sealing) => createSealingEventStore(inner, { keys, master, store: options.store, keysWithEvents: sealing?.keysWithEvents }),
  };
}
