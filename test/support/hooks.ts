import { dropTemplates } from './db.js';
import { stopEmbeddedServer } from './postgres-server.js';

// Mocha root hooks: shared services started lazily by the tests are stopped once at the end.
export const mochaHooks = {
  async afterAll() {
    await dropTemplates();
    await stopEmbeddedServer();
  },
};
