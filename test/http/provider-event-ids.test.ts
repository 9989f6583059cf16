import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { execute } from '../../src/commands/execute.js';
import { messageDecider } from '../../src/domain/messages/message.js';
import type { ProviderOutcome } from '../../src/domain/messages/events.js';
import type { TestApp } from '../support/app.js';
import { eventually, readyToSend, switchProvider } from '../support/email-setup.js';
import type { FakeSes } from '../support/fake-ses.js';
import { runScript } from '../support/messages-http.js';
import { otherAccount, providerEventsClient } from '../support/provider-events-app.js';
import { postmark, sesEvent, type SesEventOptions, type SesKind } from '../support/provider-events-payloads.js';
import { POSTMARK_HOOK, startProviderEventsServers, type ProviderEventsServers } from '../support/provider-events-servers.js';
import { signedSnsNotification, type SnsCertServer } from '../support/sns-signing.js';

const { user: USER, password: PASSWORD } = POSTMARK_HOOK;

/** The tables of a `pg_dump` whose rows hold `text`. */
async function tablesHolding(app: TestApp, ...texts: string[]): Promise<string[]> {
  const { stdout } = await promisify(execFile)('pg_dump', ['--no-owner', '--data-only', app.config.DATABASE_URL!], { maxBuffer: 256 * 1024 * 1024 });
  const tables = new Set<string>();
  for (const block of stdout.split(/^COPY /m).slice(1)) {
    const rows = block.slice(0, block.indexOf('\n\\.\n'));
    if (texts.some((t) => rows.toLowerCase().includes(t.toLowerCase()))) tables.add(block.slice(0, block.indexOf(' ')));
  }
  return [...tables].sort();
}

/**
 * A provider event's id is kept in clear (it is what makes a redelivery a no-op, after an erasure too),
 * in the event, the metadata of what it wrote, the timeline, the changes feed and a dump. It holds no
 * address or link; those an earlier version ended its ids with are read without them
 * (docs/privacy.md).
 */
describe('provider event ids name no one', function () {
  this.timeout(120_000);
  let certs: SnsCertServer;
  let ses: FakeSes;
  let servers: ProviderEventsServers;
  let app: TestApp;
  let pm: ReturnType<typeof providerEventsClient>;
  let other: Awaited<ReturnType<typeof otherAccount>>;
  let sesClient: ReturnType<typeof providerEventsClient>;

  const postPostmark = async (body: unknown) => {
    const res = await app.request('POST', '/api/provider-events/postmark', { body, headers: { authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}` } });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body;
  };
  const notify = async (kind: SesKind, o: SesEventOptions, messageId?: string) => {
    const res = await app.request('POST', '/api/provider-events/ses', {
      body: JSON.stringify(signedSnsNotification(sesEvent(kind, o), { certUrl: certs.certUrl, messageId })),
      headers: { 'content-type': 'text/plain; charset=UTF-8' },
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body;
  };
  const erase = async (address: string, token: string) =>
    expect((await app.request('DELETE', `/api/contacts/${encodeURIComponent(address)}?erase=true`, { token })).status).to.equal(200);
  /**
   * Erases the Postmark reader (default account) and the SES reader (the other one), each [address,
   * message id]; then nothing either message shows names either address, nor holds `marker`.
   */
  const eraseBoth = async (readers: Record<'pm' | 'ses', [string, string]>, marker: string) => {
    const [[pmAddress, pmId], [sesAddress, sesId]] = [readers.pm, readers.ses];
    await erase(pmAddress, app.adminToken);
    await erase(sesAddress, other.token);
    await eventually(() => app.infra.db('messages').whereIn('id', [pmId, sesId]).whereNull('to_address'), (r) => r.length === 2);
    for (const [id, token] of [[pmId, app.adminToken], [sesId, other.token]]) {
      const text = (await shown(id, token)).toLowerCase();
      expect(text).to.not.include(pmAddress).and.not.include(sesAddress).and.not.include(marker);
    }
  };
  /** everything the API and `npm run replay` show of a message, as text */
  const shown = async (id: string, token: string) => {
    const view = await app.request('GET', `/api/messages/${id}`, { token });
    const history = await app.request('GET', `/api/messages/${id}/history`, { token });
    const changes = await app.request('GET', '/api/messages/changes?limit=1000', { token });
    const replay = await runScript(app, 'replay', [id]);
    expect([view.status, history.status, changes.status, replay.code], replay.stderr).to.deep.equal([200, 200, 200, 0]);
    return JSON.stringify([view.body, history.body, changes.body.items.filter((c: any) => c.messageLogId === id)]) + replay.stdout;
  };

  before(async () => {
    servers = await startProviderEventsServers();
    ({ app, certs, ses } = servers);
    const sender = await readyToSend(app);
    await switchProvider(app, 'postmark');
    pm = providerEventsClient(app, sender);
    other = await otherAccount(app, 'ids-ses', 'ses', ses);
    sesClient = providerEventsClient(app, other.sender);
  });
  after(async () => {
    await servers?.close();
  });

  it('what this version records of Postmark and SES reports holds neither address nor link in clear; after the erasure, nothing shows them', async () => {
    const pmAddress = 'ids.postmark.reader@example.org';
    const sesAddress = 'ids.ses.reader@example.org';
    const link = 'https://example.com/Link-Marker-9d2c';
    const a = await pm.sendAccepted(pmAddress);
    const hook = { msgId: a.id, postmarkMessageId: a.providerMessageId, recipient: pmAddress };
    await postPostmark(postmark.delivery(hook));
    await postPostmark(postmark.open(hook));
    await postPostmark(postmark.click({ ...hook, link }));
    await postPostmark(postmark.bounce({ ...hook, id: 8101, type: 'SoftBounce', inactive: false }));
    const b = await sesClient.sendAccepted(sesAddress);
    const event = { msgId: b.id, sesMessageId: b.providerMessageId, recipients: [sesAddress] };
    for (const kind of ['Delivery', 'Open', 'Click', 'Bounce'] as const) await notify(kind, { ...event, link });
    expect(await pm.historyTypes(a.id)).to.deep.equal(['EmailQueued', 'ProviderAccepted', 'Delivered', 'Opened', 'Clicked', 'Bounced']);
    expect(await sesClient.historyTypes(b.id)).to.deep.equal(['EmailQueued', 'ProviderAccepted', 'Delivered', 'Opened', 'Clicked', 'Bounced']);

    // the log: what is not sealed (ids, command ids, causes) names no one
    const { rows } = await app.infra.db.raw(`SELECT count(*)::int AS n FROM events WHERE data::text ILIKE ANY (?) OR metadata::text ILIKE ANY (?)`, [
      [`%${pmAddress}%`, `%${sesAddress}%`, '%Link-Marker%'],
      [`%${pmAddress}%`, `%${sesAddress}%`, '%Link-Marker%'],
    ]);
    expect(rows[0].n).to.equal(0);

    await eraseBoth({ pm: [pmAddress, a.id], ses: [sesAddress, b.id] }, 'link-marker');
    expect(await tablesHolding(app, pmAddress, sesAddress, 'Link-Marker')).to.deep.equal([]);
  });

  it('a report recorded by an earlier version (its id ending with the address or link) and delivered again after the upgrade is recorded once; after the erasure, only the events table still holds the address, in those ids', async () => {
    const pmAddress = 'ids.old.postmark@example.org';
    const sesAddress = 'ids.old.ses@example.org';
    const link = 'https://example.com/Old-Link-3e7a';
    const receivedAt = '2026-03-01T09:30:02.4120000Z';
    const a = await pm.sendAccepted(pmAddress);
    const b = await sesClient.sendAccepted(sesAddress);
    const notification = crypto.randomUUID();
    // as the earlier version recorded them: through the same decider, the id as the event's command id and cause
    const recordedBefore = async (id: string, event: ProviderOutcome) =>
      execute(messageDecider, { kind: 'recordOutcome', event }, {
        eventStore: app.infra.eventStore,
        streamId: `message-${id}`,
        commandId: event.data.providerEventId,
        metadata: { actor: 'provider', causationId: event.data.providerEventId },
      });
    const at = new Date().toISOString();
    await recordedBefore(a.id, { type: 'Delivered', data: { providerEventId: `pm:delivery:${a.providerMessageId}:${pmAddress}`, occurredAt: at, recipient: pmAddress } });
    await recordedBefore(a.id, {
      type: 'Clicked',
      data: { providerEventId: `pm:click:${a.providerMessageId}:${receivedAt}:${link}`, occurredAt: at, recipient: pmAddress, url: link, suspectedBot: false, source: 'provider' },
    });
    await recordedBefore(b.id, { type: 'Delivered', data: { providerEventId: `ses:${notification}:${sesAddress}`, occurredAt: at, recipient: sesAddress } });
    const hook = { msgId: a.id, postmarkMessageId: a.providerMessageId, recipient: pmAddress };

    // the providers deliver the same reports again, to this version
    expect(await postPostmark(postmark.delivery(hook))).to.deep.equal({ recorded: 1, pending: 0 });
    expect(await postPostmark({ ...postmark.click({ ...hook, link }), ReceivedAt: receivedAt })).to.deep.equal({ recorded: 1, pending: 0 });
    expect(await notify('Delivery', { msgId: b.id, sesMessageId: b.providerMessageId, recipients: [sesAddress] }, notification)).to.deep.equal({ recorded: 1, pending: 0 });
    expect(await pm.historyTypes(a.id)).to.deep.equal(['EmailQueued', 'ProviderAccepted', 'Delivered', 'Clicked']);
    expect(await sesClient.historyTypes(b.id)).to.deep.equal(['EmailQueued', 'ProviderAccepted', 'Delivered']);
    // another link clicked in the same instant is another click
    expect(await postPostmark({ ...postmark.click({ ...hook, link: 'https://example.com/other' }), ReceivedAt: receivedAt })).to.deep.equal({ recorded: 1, pending: 0 });
    expect((await pm.historyTypes(a.id)).filter((t) => t === 'Clicked')).to.have.length(2);

    await eraseBoth({ pm: [pmAddress, a.id], ses: [sesAddress, b.id] }, 'old-link');
    const timeline = (await app.request('GET', `/api/messages/${a.id}`, { token: app.adminToken })).body.events.map((e: any) => e.data.providerEventId);
    expect(timeline).to.include.members([`pm:delivery:${a.providerMessageId}`, `pm:click:${a.providerMessageId}:${receivedAt}`]);
    // the log is append-only: the ids it holds in clear keep what they were written with (docs/privacy.md)
    expect(await tablesHolding(app, pmAddress, sesAddress, 'Old-Link')).to.deep.equal(['public.events']);
  });
});
