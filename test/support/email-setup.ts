import type { TestApp } from './app.js';

/** An account ready to send: a verified domain (the sandbox provider verifies at once) and a key. */
export async function readyToSend(app: TestApp, options: { token?: string; domain?: string; scopes?: string[]; key?: Record<string, unknown> } = {}) {
  const token = options.token ?? app.adminToken;
  const domain = options.domain ?? 'example.com';
  const dom = await app.request('POST', '/api/domains', { token, body: { domain } });
  if (dom.status !== 201 && dom.status !== 409) throw new Error(`domain: ${dom.status} ${JSON.stringify(dom.body)}`);
  const key = await app.request('POST', '/api/api-keys', { token, body: { name: 'sender', scopes: options.scopes ?? ['send', 'read_events'], ...options.key } });
  if (key.status !== 201) throw new Error(`key: ${key.status} ${JSON.stringify(key.body)}`);
  return { key: key.body.key as string, keyId: key.body.id as string, from: `app@${domain}` };
}

export async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`condition not met in ${timeoutMs} ms: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
