import type { TestApp } from './app.js';

export const ORIGINATION = '+18445550100';

export interface SmsSettingsBody {
  enabled: boolean;
  originationNumber: string | null;
  sandbox: boolean;
  sandboxDestinations: string[];
}

/** PUT /api/settings/sms, failing loudly when the settings route refuses. */
export async function setSms(app: TestApp, settings: Partial<SmsSettingsBody>, token = app.adminToken) {
  const body: SmsSettingsBody = { enabled: true, originationNumber: ORIGINATION, sandbox: false, sandboxDestinations: [], ...settings };
  const res = await app.request('PUT', '/api/settings/sms', { token, body });
  if (res.status !== 200) throw new Error(`sms settings: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as SmsSettingsBody;
}

/** An account ready to send SMS (enabled, origination number, out of the SMS sandbox) and a key. */
export async function readyToSendSms(app: TestApp, options: { token?: string; scopes?: string[]; key?: Record<string, unknown> } = {}) {
  const token = options.token ?? app.adminToken;
  await setSms(app, {}, token);
  const key = await app.request('POST', '/api/api-keys', { token, body: { name: 'sms', scopes: options.scopes ?? ['sms:send', 'read_events'], ...options.key } });
  if (key.status !== 201) throw new Error(`key: ${key.status} ${JSON.stringify(key.body)}`);
  return { key: key.body.key as string, keyId: key.body.id as string };
}

