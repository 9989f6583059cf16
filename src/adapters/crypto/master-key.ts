import { createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { normaliseAddress } from '../../domain/privacy/personal-data.js';
import { open, seal } from './aes-gcm.js';

/**
 * The key-encryption key (ENCRYPTION_KEY: 32 bytes, base64 or hex) and the keys derived from it: one
 * wraps the data keys, one hashes addresses. Deriving both from one secret keeps a single thing for the
 * operator to hold; HKDF keeps them independent.
 *
 * Rotation (`npm run admin -- rotate-encryption-key`) re-wraps the data keys under a new key. The
 * address hash must not change with it (stream names, suppressions and erasures are keyed by it), so
 * rotation stores the hashing key, wrapped like a data key, under PERSON_HASH_KEY_ID; a database with
 * that key uses it, one without derives it from the key it was written with.
 */
export interface MasterKey {
  wrap(id: string, dataKey: Buffer): Buffer;
  /** the data key, or null when `wrapped` was not wrapped under this key for `id` */
  unwrap(id: string, wrapped: Buffer): Buffer | null;
  /**
   * The keyed hash naming a person: HMAC-SHA-256 of the normalised address. The same in every account
   * (keys, suppressions and erasures are still per account), so a send can look a suppression up
   * before its statement has resolved which account the API key belongs to.
   */
  person(address: string): string;
  /**
   * A keyed digest of a text that must be told apart without being kept (a clicked link, in a provider
   * event id kept in clear): HMAC-SHA-256 under the address-hashing key, apart from addresses by a
   * prefix, in 32 hex digits. Like the person hash, it survives a rotation, and a guess cannot be
   * checked against it without the key.
   */
  digest(text: string): string;
  /** A value only this key produces and checks (see KeyStore.verifier). */
  verifier(): string;
  verifies(value: string): boolean;
}

export function parseMasterKey(text: string): Buffer | null {
  const t = text.trim();
  if (/^[0-9a-f]{64}$/i.test(t)) return Buffer.from(t, 'hex');
  const b = Buffer.from(t, 'base64');
  return b.length === 32 && /^[A-Za-z0-9+/_-]+=*$/.test(t) ? b : null;
}

export function generateMasterKeyText(): string {
  return randomBytes(32).toString('base64');
}

const derive = (master: Buffer, info: string) => Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), info, 32));
const VERIFIER_AAD = 'courier-ledger key verifier';
/** What a digest's text is hashed after: no normalised address starts with a NUL, so no digest is a person's hash. */
const DIGEST_PREFIX = '\0digest\n';

/** The id under which a rotated database keeps its address-hashing key (a data key of no account). */
export const PERSON_HASH_KEY_ID = '00000000-0000-4000-8000-000000000001';
/** The address-hashing key of a database never rotated: derived from the key it was written with. */
export const derivedPersonHashKey = (master: Buffer) => derive(master, 'courier-ledger person hash');

/**
 * `previous`: the key being rotated away from (ENCRYPTION_KEY_PREVIOUS), which still opens what it
 * wrapped and what it verified; new keys are wrapped under `master` only. `hashing`: the stored
 * address-hashing key, when the database has one.
 */
export function createMasterKey(master: Buffer, options: { previous?: Buffer; hashing?: Buffer } = {}): MasterKey {
  const wrapping = derive(master, 'courier-ledger data-key wrapping');
  const before = options.previous && derive(options.previous, 'courier-ledger data-key wrapping');
  const hashing = options.hashing ?? derivedPersonHashKey(options.previous ?? master);
  // the same recipients come back (a customer's receipts, a campaign's list): one HMAC each while cached
  const people = new LRUCache<string, string>({ max: 100_000 });
  return {
    wrap: (id, dataKey) => seal(wrapping, dataKey, id),
    unwrap: (id, wrapped) => open(wrapping, wrapped, id) ?? (before ? open(before, wrapped, id) : null),
    person(address) {
      const normal = normaliseAddress(address);
      let hash = people.get(normal);
      if (hash === undefined) {
        hash = createHmac('sha256', hashing).update(normal).digest('base64url');
        people.set(normal, hash);
      }
      return hash;
    },
    digest: (text) => createHmac('sha256', hashing).update(DIGEST_PREFIX).update(text, 'utf8').digest('hex').slice(0, 32),
    verifier: () => seal(wrapping, Buffer.from(VERIFIER_AAD), VERIFIER_AAD).toString('base64'),
    verifies: (value) => [wrapping, before].some((k) => k && open(k, Buffer.from(value, 'base64'), VERIFIER_AAD) !== null),
  };
}
