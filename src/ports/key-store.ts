/**
 * Where the per-person data keys live, each wrapped (encrypted) under the key-encryption key. This is
 * the one mutable place personal data depends on: destroying a person's keys makes everything sealed
 * under them unreadable, in the append-only log and in every copy of it (docs/privacy.md). Two adapters
 * implement it (PostgreSQL, memory) and one contract suite (test/adapters/crypto/key-store-contract.ts)
 * runs against both.
 */

/** One key's place: a person of an account (the keyed hash of their address) and a scope (`profile`, or a UTC day `YYYY-MM-DD`). */
export interface KeySlot {
  accountId: string;
  person: string;
  scope: string;
}

export interface WrappedKey {
  id: string;
  wrapped: Buffer;
}

export interface KeyStore {
  /**
   * Stores new keys. A slot may hold several (each process makes its own, and a new one when its
   * cache forgets): nothing is read before a key is made, so a send waits for no key lookup. On
   * PostgreSQL a new key is usually stored by the append of the events sealed under it instead, in
   * the same statement (AppendOptions.keys); this is for the others (EventStoreDB, an append that
   * waits for another's key).
   */
  store(keys: (KeySlot & WrappedKey)[]): Promise<void>;
  /** The keys among `ids` that still exist (a destroyed key is absent). */
  find(ids: string[]): Promise<Map<string, Buffer>>;
  /** Destroys every key of a person in an account and remembers the person's hash there as erased. */
  erase(accountId: string, person: string): Promise<void>;
  /** Whether a person of an account has a key (something sealed for them that an erasure has not destroyed). */
  holds(accountId: string, person: string): Promise<boolean>;
  /** Those of `people` that were erased, as `<accountId>\n<person>`. */
  erased(people: { accountId: string; person: string }[]): Promise<Set<string>>;
  /** Destroys the account's day keys before `day` (retention); returns how many. */
  destroyBefore(accountId: string, day: string): Promise<number>;
  /**
   * The value that tells whether a key-encryption key is the one the stored keys were wrapped with:
   * the stored one, or `proposed` stored now when there is none.
   */
  verifier(proposed: string): Promise<string>;
  /**
   * Whether a key-encryption key was ever bound to this store: a verifier or a data key stored, or a
   * person erased. A newly generated key could then not open what is there.
   */
  holdsKeys(): Promise<boolean>;
}

/** The keyed hash naming a person by address (the same for every spelling of one address). */
export type PersonOf = (address: string) => string;
