import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createId } from '@paralleldrive/cuid2';
import { execute } from '../../src/commands/execute.js';
import { messageStream, type EmailQueued, type ProviderOutcome } from '../../src/domain/messages/events.js';
import { messageDecider } from '../../src/domain/messages/message.js';
import { SEND_JOB } from '../../src/process-managers/send-messages.js';
import type { TestApp } from './app.js';
import { eventually } from './email-setup.js';
import { emailQueued } from './messages-projection.js';

/** One real send through POST /api/send/transactional; returns the message id. */
export async function sendOne(
  app: TestApp,
  apiKey: string,
  body: { to: string; fromEmail: string; subject: string; tags?: string[]; metadata?: Record<string, string> },
): Promise<string> {
  const res = await app.request('POST', '/api/send/transactional', { apiKey, body: { ...body, html: '<p>Hi</p>', text: 'Hi' } });
  if (res.status !== 201) throw new Error(`send: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.messageLogId;
}

/** The read model's rows of these messages, once every one of them is past `queued` (the sandbox accepted it). */
export async function untilSent(app: TestApp, ids: string[]) {
  return eventually(
    () => app.infra.db('messages').whereIn('id', ids).select('id', 'status', 'account_id', 'created_at'),
    (rows) => rows.length === ids.length && rows.every((r) => r.status !== 'queued'),
    20_000,
  );
}

/** A provider outcome recorded the way ingestion records it: the message decider, via `execute`. */
export async function recordOutcome(app: TestApp, messageId: string, type: ProviderOutcome['type'], extra: Record<string, unknown> = {}) {
  const data = { providerEventId: `test:${createId()}`, occurredAt: new Date().toISOString(), recipient: 'r@example.org', ...extra };
  if (type === 'Opened' || type === 'Clicked') Object.assign(data, { suspectedBot: false, source: 'service', ...extra });
  if (type === 'Clicked') Object.assign(data, { url: 'https://example.com/', ...extra });
  if (type === 'Bounced') Object.assign(data, { bounceType: 'hard', ...extra });
  return execute(messageDecider, { kind: 'recordOutcome', event: { type, data } as ProviderOutcome }, {
    eventStore: app.infra.eventStore,
    streamId: messageStream(messageId),
    metadata: { actor: 'system:test-provider' },
  });
}

/**
 * A message queued through the message decider directly, for what the send endpoint cannot set: a
 * campaign, or several messages with one identical createdAt (keyset ties).
 */
export async function queueDirect(app: TestApp, over: Partial<EmailQueued['data']> & { accountId: string }, options: { heldBySender?: boolean; messageId?: string } = {}): Promise<string> {
  const id = options.messageId ?? createId();
  // `heldBySender`: its send effect is claimed, before it exists, by a worker that never finishes (as
  // one that died holding the provider's answer, its lease still running): no worker calls a provider.
  if (options.heldBySender) {
    await app.infra.db('side_effects').insert({
      id: `send:${id}`,
      kind: SEND_JOB,
      payload: JSON.stringify({ messageId: id }),
      run_after: new Date(),
      status: 'running',
      claimed_until: new Date(Date.now() + 3_600_000),
    });
  }
  const { data } = emailQueued(id, { apiKeyId: null, queuedAt: new Date().toISOString(), ...over });
  await execute(messageDecider, { kind: 'queueEmail', data }, { eventStore: app.infra.eventStore, streamId: messageStream(id), metadata: { actor: 'system:test' } });
  return id;
}

/** Runs one of the repository's npm scripts (`scripts/<name>.ts`) as its own process against the app's database. */
export async function runScript(app: TestApp, script: string, args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  const file = fileURLToPath(new URL(`../../scripts/${script}.ts`, import.meta.url));
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', file, ...args], {
      env: { ...process.env, DATABASE_URL: app.config.DATABASE_URL!, ENCRYPTION_KEY: app.config.ENCRYPTION_KEY, LOG_LEVEL: 'silent' },
      timeout: 60_000,
    });
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; code?: number };
    return { stdout: e.stdout ?? '', stderr: e.stderr ?? '', code: typeof e.code === 'number' ? e.code : 1 };
  }
}
