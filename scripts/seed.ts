/**
 * npm run seed -- [--messages 100000] [--campaign 10000] [--account <id>]
 *
 * Seeds message history THROUGH THE EVENT LOG (never by writing read-model rows): every message is a
 * `message-<id>` stream with EmailQueued and what followed (ProviderAccepted or ProviderFailed,
 * Delivered, Bounced, Complained, Opened, Clicked), appended in bulk, many streams per commit and
 * several commits in parallel. Then it runs the projections until the `messages` read model has
 * applied every seeded event. `--campaign N` puts N of the messages, spread through the history, in
 * campaign `seed-campaign`.
 *
 * Every seeded message already has its provider outcome, so a running worker has nothing to send;
 * still, seed a development or bench database, not a live one.
 */
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import type { Db } from '../src/adapters/db/knex.js';
import type { EmailQueued } from '../src/domain/messages/events.js';
import type { EventStore, NewEvent, StreamAppend } from '../src/ports/event-store.js';

export interface SeedOptions {
  eventStore: EventStore;
  accountId: string;
  /** keys the messages are spread over (null: dashboard sends) */
  apiKeyIds: (string | null)[];
  messages: number;
  campaign?: { id: string; size: number };
  /** streams per commit */
  batch?: number;
  /** commits in flight */
  concurrency?: number;
  /** when the newest message was queued; older ones go back one second each */
  newest?: Date;
  /** gives every message one of four tags and one of three `plan` metadata entries, as a tagged send would */
  labelled?: boolean;
  onProgress?(messages: number, events: number): void;
}

const DAY = 86_400_000;

/** A small deterministic generator, so a seed with the same options tells the same story. */
function random(seed: number) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4_294_967_296;
  };
}

function eventsOf(i: number, o: SeedOptions, runTag: string, rnd: () => number): StreamAppend {
  const id = `seed${runTag}${i.toString(36).padStart(5, '0')}`;
  const queuedAt = new Date((o.newest ?? new Date()).getTime() - (o.messages - i) * 1000);
  const at = (ms: number) => new Date(queuedAt.getTime() + ms).toISOString();
  // exactly `size` members, evenly spread through the history
  const size = o.campaign?.size ?? 0;
  const inCampaign = Math.floor(((i + 1) * size) / o.messages) > Math.floor((i * size) / o.messages);
  const to = `user${i}@example.org`;
  const queued: EmailQueued['data'] = {
    messageId: id,
    accountId: o.accountId,
    apiKeyId: o.apiKeyIds[i % o.apiKeyIds.length] ?? null,
    campaignId: inCampaign ? o.campaign!.id : null,
    templateId: null,
    unsubscribeUrl: null,
    tracking: 'service',
    provider: 'sandbox',
    from: 'Seed <news@seed.example>',
    fromEmail: 'news@seed.example',
    fromName: 'Seed',
    to,
    replyTo: null,
    subject: inCampaign ? 'Spring sale' : `Your receipt #${i}`,
    html: `<p>Receipt ${i}</p>`,
    text: `Receipt ${i}`,
    headers: [],
    queuedAt: queuedAt.toISOString(),
    ...(o.labelled ? { tags: [`kind-${i % 4}`], metadata: { plan: ['free', 'pro', 'team'][i % 3] } } : {}),
  };
  const list: { type: string; data: unknown; actor: string }[] = [{ type: 'EmailQueued', data: queued, actor: queued.apiKeyId ? `apikey:${queued.apiKeyId}` : 'system:seed' }];
  const provider = (type: string, ms: number, extra: Record<string, unknown> = {}) =>
    list.push({ type, actor: 'system:seed-provider', data: { providerEventId: `seed:${id}:${list.length}`, occurredAt: at(ms), recipient: to, ...extra } });
  const r = rnd();
  if (r < 0.02) {
    list.push({ type: 'ProviderFailed', actor: 'system:worker', data: { attempt: 1, error: 'seeded provider rejection', failedAt: at(1000) } });
  } else {
    list.push({ type: 'ProviderAccepted', actor: 'system:worker', data: { providerMessageId: `sandbox-${id}`, provider: 'sandbox', acceptedAt: at(1000), attempt: 1 } });
    if (r < 0.05) provider('Bounced', 3000, { bounceType: 'hard', diagnostic: 'smtp; 550 5.1.1 user unknown' });
    else if (r < 0.97) {
      provider('Delivered', 2000, { smtpResponse: '250 OK' });
      if (r < 0.053) provider('Complained', DAY, { feedbackType: 'abuse' });
      const engaged = rnd();
      if (engaged < 0.35) provider('Opened', 60_000, { suspectedBot: engaged < 0.05, source: 'service', userAgent: 'Mozilla/5.0' });
      if (engaged < 0.15) provider('Opened', 3_600_000, { suspectedBot: false, source: 'service', userAgent: 'Mozilla/5.0' });
      if (engaged < 0.08) provider('Clicked', 3_700_000, { url: 'https://seed.example/offer', suspectedBot: false, source: 'service' });
    }
  }
  const events: NewEvent[] = list.map((e) => ({ id: randomUUID(), type: e.type, data: e.data, metadata: { actor: e.actor } }));
  return { streamId: `message-${id}`, events, expectedRevision: 'no_stream' };
}

/** Appends the seeded streams; returns how many events it wrote. */
export async function seedMessages(o: SeedOptions): Promise<{ messages: number; events: number }> {
  const batch = o.batch ?? 500;
  const concurrency = o.concurrency ?? 8;
  const runTag = Date.now().toString(36);
  const rnd = random(o.messages);
  let next = 0;
  let messages = 0;
  let events = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (;;) {
        const from = next;
        if (from >= o.messages) return;
        next = Math.min(o.messages, from + batch);
        const appends = Array.from({ length: next - from }, (_, k) => eventsOf(from + k, o, runTag, rnd));
        if (o.eventStore.appendMany) await o.eventStore.appendMany(appends);
        else for (const a of appends) await o.eventStore.append(a.streamId, a.events, { expectedRevision: a.expectedRevision });
        messages += appends.length;
        events += appends.reduce((n, a) => n + a.events.length, 0);
        o.onProgress?.(messages, events);
      }
    }),
  );
  return { messages, events };
}

/** Resolves once the `messages` read model has applied every event of the message streams. */
export async function untilProjected(db: Db, onProgress?: (applied: number, total: number) => void, timeoutMs = 3_600_000): Promise<void> {
  const [{ n }] = await db('events').whereLike('stream_id', 'message-%').count('* as n');
  const total = Number(n);
  const end = Date.now() + timeoutMs;
  for (;;) {
    const cp = await db('projection_checkpoints').where({ name: 'messages', status: 'active' }).first('events');
    const applied = Number(cp?.events ?? 0);
    onProgress?.(applied, total);
    if (applied >= total) return;
    if (Date.now() > end) throw new Error(`messages projection at ${applied}/${total} events after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main() {
  const { loadConfig } = await import('../src/config/env.js');
  const { openInfrastructure } = await import('../src/infrastructure.js');
  const { createProjectionRunner } = await import('../src/projections/runner.js');
  const { projections } = await import('../src/projections/registry.js');
  const count = Number(arg('messages') ?? '100000');
  const campaignSize = Number(arg('campaign') ?? Math.round(count / 10));
  if (!Number.isInteger(count) || count < 1 || !Number.isInteger(campaignSize) || campaignSize < 0 || campaignSize > count) {
    console.error('Usage: npm run seed -- [--messages N] [--campaign M ≤ N] [--account <id>]');
    process.exit(1);
  }
  const infra = await openInfrastructure(loadConfig());
  const runner = createProjectionRunner({ db: infra.db, eventStore: infra.eventStore, projections });
  try {
    await runner.start();
    const accountId = arg('account') ?? (await infra.db('accounts').orderBy('created_at').first('id'))?.id;
    if (!accountId) throw new Error('no account yet: start the service once (it bootstraps the admin account) or pass --account');
    const keys = await infra.db('api_keys').where({ account_id: accountId }).pluck('id').catch(() => [] as string[]);
    const started = Date.now();
    let last = 0;
    const seeded = await seedMessages({
      eventStore: infra.eventStore,
      accountId,
      apiKeyIds: [...keys, null],
      messages: count,
      campaign: { id: 'seed-campaign', size: campaignSize },
      onProgress(m, e) {
        if (Date.now() - last > 2000 || m === count) {
          last = Date.now();
          console.log(`seeded ${m}/${count} messages (${e} events)`);
        }
      },
    });
    const appendSeconds = (Date.now() - started) / 1000;
    console.log(`appended ${seeded.events} events in ${appendSeconds.toFixed(1)} s (${Math.round(seeded.events / appendSeconds)} events/s); projecting…`);
    await untilProjected(infra.db, (applied, total) => {
      if (Date.now() - last > 2000) {
        last = Date.now();
        console.log(`messages projection: ${applied}/${total} events`);
      }
    });
    console.log(`Seeded ${seeded.messages} messages (${campaignSize} in campaign seed-campaign) for account ${accountId} in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
  } finally {
    await runner.stop();
    await infra.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(`Seed failed: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    },
  );
}
