import type { Db } from '../adapters/db/knex.js';
import { accountDecider, accountStream } from '../domain/accounts/account.js';
import { retentionCutoff } from '../domain/privacy/personal-data.js';
import type { EventStore } from '../ports/event-store.js';
import type { KeyStore } from '../ports/key-store.js';
import { execute } from './execute.js';
import { accountsWithRetention } from '../read-models/accounts.js';

/**
 * The retention job (docs/privacy.md): for each account with `retentionDays`, destroys the data keys
 * of the UTC days of message content before the cutoff, which makes those messages' bodies, subjects
 * and recipient addresses unreadable in the log the way an erasure does, then records the cutoff
 * (MessageContentExpired) for the read models to null what they show. Safe to run any number of times
 * a day: the keys of a day go once, and a cutoff is recorded once.
 */
export function createRetention(deps: {
  db: Db;
  eventStore: EventStore;
  keys: Pick<KeyStore, 'destroyBefore'>;
  /** drops cached keys once days were destroyed */
  forgetAll(): void;
  /** forgets copies of expired messages kept outside the log (the sandbox providers' records) */
  forgetCopies?(accountId: string, before: string): Promise<void>;
}) {
  return {
    async apply(now = new Date()): Promise<{ accounts: number; keys: number }> {
      const accounts = await accountsWithRetention(deps.db);
      let keys = 0;
      for (const account of accounts) {
        const before = retentionCutoff(account.retention_days, now);
        keys += await deps.keys.destroyBefore(account.id, before);
        await execute(accountDecider, { kind: 'expireContent', before, now: now.toISOString() }, {
          eventStore: deps.eventStore,
          streamId: accountStream(account.id),
          commandId: `expire-${account.id}-${before}`,
          metadata: { actor: 'system:retention' },
        });
        await deps.forgetCopies?.(account.id, before);
      }
      if (keys > 0) deps.forgetAll();
      return { accounts: accounts.length, keys };
    },
  };
}
