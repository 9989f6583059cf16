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

/** the fake SES server's way of saying an identity passed its checks (test/support/fake-ses.ts) */
export type IdentityChecker = { setIdentity(identity: string, state: Record<string, unknown>): void };

/**
 * Switches the account to `emailProvider` and has the new provider check its domains and senders, as
 * an admin does after a switch (what one provider verified says nothing of another). `ses`: the fake
 * SES server, told first that each of them passed its checks there.
 */
export async function switchProvider(app: TestApp, emailProvider: 'ses' | 'postmark' | 'sandbox', options: { token?: string; ses?: IdentityChecker } = {}) {
  const token = options.token ?? app.adminToken;
  const patched = await app.request('PATCH', '/api/settings', { token, body: { emailProvider } });
  if (patched.status !== 200) throw new Error(`settings: ${patched.status} ${JSON.stringify(patched.body)}`);
  for (const [path, field] of [['/api/domains', 'domain'], ['/api/senders', 'email']] as const) {
    for (const identity of (await app.request('GET', path, { token })).body.items as Record<string, string>[]) {
      const verify = () => app.request('POST', `${path}/${identity.id}/verify`, { token });
      // the first check registers it with the new provider; the fake SES then says it passed
      let verified = await verify();
      if (options.ses && verified.status === 200 && !verified.body.verified) {
        options.ses.setIdentity(identity[field], field === 'domain' ? { dkim: 'SUCCESS', mailFrom: 'SUCCESS' } : { verifiedForSending: true });
        verified = await verify();
      }
      if (verified.status !== 200 || !verified.body.verified) throw new Error(`verify ${identity[field]}: ${verified.status} ${JSON.stringify(verified.body)}`);
    }
  }
  return patched.body;
}
