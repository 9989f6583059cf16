import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { loadConfig, type Config } from '../../src/config/env.js';
import { createApplication } from '../../src/application.js';
import type { Infrastructure } from '../../src/infrastructure.js';
import { listen } from '../../src/http/server.js';
import { createLogger } from '../../src/logger.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { redisPrefixFor, TEST_ENCRYPTION_KEY } from './spawn-server.js';

export const ADMIN_EMAIL = 'admin@localhost';
export const ADMIN_PASSWORD = 'correct-horse-battery';

export interface TestApp {
  baseUrl: string;
  config: Config;
  infra: Infrastructure;
  /** a dashboard JWT of the default account's owner */
  adminToken: string;
  /** JSON request helper: returns status, parsed body (and the text it was parsed from) and headers */
  request(method: string, path: string, options?: { body?: unknown; headers?: Record<string, string>; token?: string; apiKey?: string }): Promise<{ status: number; body: any; text: string; headers: Headers }>;
  createApiKey(scopes: string[], extra?: Record<string, unknown>): Promise<{ id: string; key: string }>;
  close(): Promise<void>;
}

/**
 * The whole service (API + workers) in-process on a fresh database and a random port, with the
 * default account bootstrapped. `env` overrides configuration variables.
 */
export async function startTestApp(env: Record<string, string> = {}, options: { clock?: () => Date; database?: TestDatabase } = {}): Promise<TestApp> {
  // a database the test prepared (an earlier version's schema, say) is the app's from here on: dropped on close
  const testDb = options.database ?? (await createTestDatabase());
  const config = loadConfig({
    DATABASE_URL: testDb.url,
    PORT: '0',
    ADMIN_EMAIL,
    ADMIN_PASSWORD,
    LOG_LEVEL: 'silent',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    // Tests create further accounts and send SMS without AWS; an empty value in `env` restores a default.
    ALLOW_SIGNUP: 'true',
    SMS_PROVIDER: 'sandbox',
    // as a deployment sets one (unset, the key would be kept in the working directory's DATA_DIR);
    // the processes spawned beside the app on its database use the same
    ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    ...(env.REDIS_URL ? { REDIS_PREFIX: redisPrefixFor(testDb.url) } : {}),
    ...env,
  });
  const application = await createApplication('all', { config, logger: createLogger(config.LOG_LEVEL), clock: options.clock });
  const { infra, api, boot } = application as Required<typeof application>;
  await api.waitFor('accounts', boot.position);
  const server: Server = await listen(api.app, config, 0, '127.0.0.1');
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // BASE_URL (tracking links, unsubscribe) must name the real port.
  config.BASE_URL = env.BASE_URL ?? baseUrl;

  const request: TestApp['request'] = async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.body !== undefined) headers['content-type'] ??= 'application/json';
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.apiKey) headers['x-api-key'] = options.apiKey;
    const res = await fetch(baseUrl + path, {
      method,
      headers,
      body: options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body),
    });
    const text = await res.text();
    let body: any = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON */
    }
    return { status: res.status, body, text, headers: res.headers };
  };

  const login = await request('POST', '/api/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
  if (login.status !== 200) throw new Error(`test app login failed: ${login.status} ${JSON.stringify(login.body)}`);
  const adminToken: string = login.body.token;

  return {
    baseUrl,
    config,
    infra,
    adminToken,
    request,
    async createApiKey(scopes, extra = {}) {
      const res = await request('POST', '/api/api-keys', { token: adminToken, body: { name: 'test', scopes, ...extra } });
      if (res.status !== 201) throw new Error(`createApiKey failed: ${res.status} ${JSON.stringify(res.body)}`);
      return { id: res.body.id, key: res.body.key };
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections?.();
      await application.stop();
      await testDb.drop();
    },
  };
}
