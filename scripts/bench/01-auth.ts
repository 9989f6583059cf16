import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import pino from 'pino';
import { createApp } from '../../src/http/app.js';
import { createAuthenticator } from '../../src/http/auth.js';
import { createJwtIssuer } from '../../src/adapters/session/jwt.js';
import { defineRoute } from '../../src/http/route.js';
import { startTestApp } from '../../test/support/app.js';
import { call, measureRates, type BenchModule } from './lib.js';

/**
 * Issue 3: what API-key authentication costs per request (hash lookup, expiry, IP allowlist, scope,
 * lastUsedAt throttle). Two no-op routes in one app, served the same way; only auth differs.
 */
const bench: BenchModule = {
  name: 'auth overhead',
  async run() {
    const service = await startTestApp();
    let server: Server | undefined;
    try {
      const { key } = await service.createApiKey(['read_events']);
      const noop = () => ({ status: 200, body: { ok: true } });
      const app = createApp({
        routes: [
          defineRoute({ method: 'get', path: '/open', summary: 'no-op', tag: 'bench', auth: { kind: 'public' }, responses: {}, handler: noop }),
          defineRoute({ method: 'get', path: '/keyed', summary: 'no-op', tag: 'bench', auth: { kind: 'apiKey', scope: 'read_events' }, responses: {}, handler: noop }),
        ],
        authenticate: createAuthenticator({ db: service.infra.db, jwt: createJwtIssuer('bench-secret-bench-secret-bench-secret') }).authenticate,
        logger: pino({ level: 'silent' }),
        baseUrl: 'http://127.0.0.1',
      });
      server = await new Promise<Server>((resolve) => {
        const s = app.listen(0, '127.0.0.1', () => resolve(s));
      });
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const probe = await call(base, 'GET', '/keyed', { headers: { 'x-api-key': key } });
      if (probe.status !== 200) throw new Error(`authenticated probe answered ${probe.status}`);
      const rates = await measureRates({
        open: () => call(base, 'GET', '/open'),
        keyed: () => call(base, 'GET', '/keyed', { headers: { 'x-api-key': key } }),
      });
      return [{ name: 'authenticated no-op', value: rates.keyed, unit: 'req/s', baseline: { name: 'unauthenticated no-op', value: rates.open }, aim: '≥ 0.7× baseline' }];
    } finally {
      server?.close();
      server?.closeAllConnections();
      await service.close();
    }
  },
};
export default bench;
