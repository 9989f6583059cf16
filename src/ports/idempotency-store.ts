import type { IdempotencyState } from '../domain/idempotency/record.js';

/** Where Idempotency-Key records live, seen alike by every API process and across restarts. */
export interface IdempotencyStore {
  /** the record of `key` for the caller `scope`, `absent` when there is none */
  load(scope: string, key: string): Promise<IdempotencyState>;
  /**
   * Writes `next` where the record is still `expected` (absent, or the same holder and status);
   * false, writing nothing, when another request changed it first.
   */
  replace(scope: string, key: string, expected: IdempotencyState, next: IdempotencyState): Promise<boolean>;
  /** deletes the records claimed before `before` (past their day); how many */
  sweep(before: Date): Promise<number>;
  /**
   * Takes `address` (in any case) out of the answers remembered for these callers (`scope`s), for an
   * erasure: a batch's answer quotes the recipients it refused. The records stay, their statuses and
   * message ids too, so that a retry is still the replay and queues none of the batch's messages again.
   * How many answers it changed.
   */
  forgetAddress(scopes: readonly string[], address: string): Promise<number>;
}
