import { randomUUID } from 'node:crypto';
import type { TestDatabase } from './db.js';

/** Rows of the feed at chosen log positions, for a key of account `acct`. */
export async function feedRows(t: TestDatabase, positions: [number, number][], owner: { account: string; key: string | null } = { account: 'acct', key: 'key-1' }) {
  await t.db('message_changes').insert(
    positions.map(([commit, prepare]) => ({
      commit_pos: commit,
      prepare_pos: prepare,
      event_id: randomUUID(),
      account_id: owner.account,
      api_key_id: owner.key,
      message_id: `m-${commit}-${prepare}`,
      type: 'queued',
      occurred_at: new Date(),
      data: {},
    })),
  );
}
