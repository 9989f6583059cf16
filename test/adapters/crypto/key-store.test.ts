import { createMemoryKeyStore } from '../../../src/adapters/crypto/memory-key-store.js';
import { createPgKeyStore } from '../../../src/adapters/crypto/pg-key-store.js';
import { createTestDatabase } from '../../support/db.js';
import { keyStoreContract } from './key-store-contract.js';

keyStoreContract('PostgreSQL', async () => {
  const db = await createTestDatabase();
  return { store: createPgKeyStore(db.db), cleanup: () => db.drop() };
});

keyStoreContract('memory', async () => ({ store: createMemoryKeyStore(), cleanup: async () => {} }));
