import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { loadConfig } from '../../src/config/env.js';
import { createApplication } from '../../src/application.js';
import type { Infrastructure } from '../../src/infrastructure.js';
import { listen } from '../../src/http/server.js';
import { createLogger } from '../../src/logger.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, type TestApp } from './app.js';
import { redisPrefixFor, spawnServer, TEST_ENCRYPTION_KEY } from './spawn-server.js';

/** Settings shared by the API and every worker process of one test: short retries, local receivers allowed. */
export function webhookEnv(databaseUrl: string, env: Record<string, string> = {}): Record<string, string> {
  // one encryption key for every process of the test, as one deployment has
  return { DATABASE_URL: databaseUrl, ADMIN_EMAIL, ADMIN_PASSWORD, ENCRYPTION_KEY: TEST_ENCRYPTION_KEY, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', LOG_LEVEL: 'silent', ...env };
}

/** A worker process (`src/main.ts worker`) on the database: projections, process managers, jobs. Kill it at will. */
export const spawnWorker = (env: Record<string, string>) => spawnServer('worker', env);

/**
 * The API role alone, in this process, on an existing database (the workers run elsewhere, e.g. in
 * `spawnWorker` processes, which must be up: the bootstrap waits for the accounts read model).
 * `close()` leaves the database in place.
 */
export async function startApiOnly(env: Record<string, string>): Promise<Omit<TestApp, 'createApiKey'> & { infra: Infrastructure }> {
  const config = loadConfig({ PORT: '0', ...(env.REDIS_URL ? { REDIS_PREFIX: redisPrefixFor(env.DATABASE_URL) } : {}), ...env });
  const application = await createApplication('api', { config, logger: createLogger(config.LOG_LEVEL) });
  const { infra, api, boot } = application as Required<typeof application>;
  await api.waitFor('accounts', boot.position);
  const server: Server = await listen(api.app, config, 0, '127.0.0.1');
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const request: TestApp['request'] = async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.body !== undefined) headers['content-type'] ??= 'application/json';
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    const res = await fetch(baseUrl + path, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, text, headers: res.headers };
  };
  const login = await request('POST', '/api/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
  if (login.status !== 200) throw new Error(`login failed: ${login.status} ${JSON.stringify(login.body)}`);
  return {
    baseUrl,
    config,
    infra,
    adminToken: login.body.token,
    request,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections?.();
      await application.stop();
    },
  };
}
