import { atEnd } from './at-end.js';
import { dropTemplates } from './db.js';
import { stopEmbeddedServer } from './postgres-server.js';

// Mocha root hooks: shared services started lazily by the tests are stopped once at the end.
export const mochaHooks = {
  async afterAll() {
    for (const stop of atEnd.splice(0)) await stop();
    await dropTemplates();
    await stopEmbeddedServer();
  },
};
