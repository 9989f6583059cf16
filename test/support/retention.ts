import { forgetExpiredCopies } from '../../src/adapters/db/message-copies.js';
import { createRetention } from '../../src/commands/retention.js';
import type { TestApp } from './app.js';

/** The retention job as the workers wire it, on the app's database: `apply()` runs one pass now. */
export const retentionOf = (app: TestApp) =>
  createRetention({
    db: app.infra.db,
    eventStore: app.infra.eventStore,
    keys: app.infra.privacy.store,
    forgetAll: app.infra.privacy.keys.forgetAll,
    forgetCopies: (accountId, before) => forgetExpiredCopies(app.infra.db, accountId, before),
  });
