import { createPgAttachmentStore } from '../../../src/adapters/db/attachment-store.js';
import { createTestDatabase } from '../../support/db.js';
import { attachmentStoreContract } from './contract.js';

attachmentStoreContract('PostgreSQL', async () => {
  const testDb = await createTestDatabase();
  return { store: createPgAttachmentStore(testDb.db), cleanup: () => testDb.drop() };
});
