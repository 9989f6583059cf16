import { expect } from 'chai';
import { execute } from '../../src/commands/execute.js';
import { retentionOf } from '../support/retention.js';
import { messageDecider } from '../../src/domain/messages/message.js';
import type { TestApp } from '../support/app.js';
import { eventually, readyToSend, switchProvider } from '../support/email-setup.js';
import type { FakeSes } from '../support/fake-ses.js';
import { queueDirect } from '../support/messages-http.js';
import { otherAccount, providerEventsClient } from '../support/provider-events-app.js';
import { postmark, sesEvent, type SesEventOptions, type SesKind } from '../support/provider-events-payloads.js';
import { POSTMARK_HOOK, startProviderEventsServers, type ProviderEventsServers } from '../support/provider-events-servers.js';
import { signedSnsNotification, type SnsCertServer } from '../support/sns-signing.js';
import { startScriptedReceiver, webhookClient, type ScriptedReceiver } from '../support/webhook-receiver.js';

const DAY = 86_400_000;
const { user: USER, password: PASSWORD } = POSTMARK_HOOK;

/**
 * A provider reports on a send long after it: a complaint can come days later, when the recipient may
 * have been erased, or the message be past the account's retention. Its address then reads as null;
 * the report must still be recorded on the message and suppress the address (no 500 unless the service
 * is failing; bounced and complained addresses are suppressed), without writing an erased person's
 * address down again (docs/privacy.md).
 */
describe('provider events about a recipient no longer on record (erased, or past retention)', function () {
  this.timeout(120_000);
  let certs: SnsCertServer;
  let ses: FakeSes;
  let servers: ProviderEventsServers;
  let app: TestApp;
  let receiver: ScriptedReceiver;
  let sender: { key: string; from: string };
  /** the default account sends through Postmark, the other one through SES */
  const accounts = {} as Record<'postmark' | 'ses', { accountId: string; token: string; client: ReturnType<typeof providerEventsClient>; hook: string }>;

  const postPostmark = (body: unknown) =>
    app.request('POST', '/api/provider-events/postmark', { body, headers: { authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}` } });
  const notify = (kind: SesKind, o: SesEventOptions) =>
    app.request('POST', '/api/provider-events/ses', {
      body: JSON.stringify(signedSnsNotification(sesEvent(kind, o), { certUrl: certs.certUrl })),
      headers: { 'content-type': 'text/plain; charset=UTF-8' },
    });

  before(async () => {
    servers = await startProviderEventsServers();
    ({ app, certs, ses } = servers);
    receiver = await startScriptedReceiver([200]);
    sender = await readyToSend(app);
    await switchProvider(app, 'postmark');
    const defaultId = (await app.infra.db('accounts').where({ name: 'default' }).first('id')).id;
    accounts.postmark = { accountId: defaultId, token: app.adminToken, client: providerEventsClient(app, sender), hook: (await webhookClient(app).subscribe(receiver.hook)).id };
    const other = await otherAccount(app, 'forgotten-ses', 'ses', ses);
    accounts.ses = {
      accountId: other.accountId,
      token: other.token,
      client: providerEventsClient(app, other.sender),
      hook: (await webhookClient(app, other.token).subscribe(receiver.hook)).id,
    };
  });
  after(async () => {
    await servers?.close();
    await receiver?.close();
  });

  const view = (provider: 'postmark' | 'ses', id: string, ok: (m: any) => boolean) =>
    eventually(async () => (await app.request('GET', `/api/messages/${id}`, { token: accounts[provider].token })).body, (m) => Boolean(m?.id) && ok(m));
  const suppressionOf = async (provider: 'postmark' | 'ses', messageId: string) =>
    ((await app.request('GET', '/api/suppressions?limit=100', { token: accounts[provider].token })).body.items as any[]).find((s) => s.messageId === messageId);
  const erase = async (provider: 'postmark' | 'ses', address: string, messageId: string) => {
    const res = await app.request('DELETE', `/api/contacts/${encodeURIComponent(address)}?erase=true`, { token: accounts[provider].token });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    await view(provider, messageId, (m) => m.to === null);
  };
  const sendTo = (provider: 'postmark' | 'ses', to: string) => {
    const { client } = accounts[provider];
    return client.sendAccepted(to);
  };
  /** the webhook deliveries of the account's endpoint that are about suppression event `eventId` */
  const deliveriesOf = async (provider: 'postmark' | 'ses', eventId: string) =>
    (await webhookClient(app, accounts[provider].token).deliveries(accounts[provider].hook)).filter((d) => d.eventId === eventId);
  /**
   * Whether the suppression of `person` fired a webhook: a later suppression in the same account
   * (a control) is delivered first, so any delivery of the earlier one exists by then.
   */
  const webhooksOf = async (provider: 'postmark' | 'ses', person: string, control: () => Promise<string>) => {
    const [suppressed] = await app.infra.eventStore.readStream(`suppression-${accounts[provider].accountId}-${person}`);
    const controlEventId = await control();
    await eventually(() => deliveriesOf(provider, controlEventId), (d) => d.length === 1);
    return deliveriesOf(provider, suppressed.id);
  };
  /** the id of the one suppression event of `address` in the account */
  const suppressionEventId = async (provider: 'postmark' | 'ses', address: string) =>
    (await app.infra.eventStore.readStream(`suppression-${accounts[provider].accountId}-${app.infra.privacy.personOf(address)}`))[0].id as string;

  describe('Postmark', () => {
    it('an erased recipient: delivery and complaint are recorded on the message, the keyed hash is suppressed (no address, no webhook), a later send is refused', async () => {
      const address = 'pm.gone@example.org';
      const m = await sendTo('postmark', address);
      const hook = { msgId: m.id, postmarkMessageId: m.providerMessageId, recipient: address };
      await erase('postmark', address, m.id);
      const aggregate = (await app.request('GET', '/api/messages/aggregate', { token: app.adminToken })).body;

      const delivered = await postPostmark(postmark.delivery(hook));
      expect(delivered.status, JSON.stringify(delivered.body)).to.equal(200);
      expect(delivered.body).to.deep.equal({ recorded: 1, pending: 0 });
      const complaint = postmark.spamComplaint({ ...hook, id: 7001 });
      const complained = await postPostmark(complaint);
      expect(complained.status, JSON.stringify(complained.body)).to.equal(200);
      expect(complained.body).to.deep.equal({ recorded: 1, pending: 0 });
      // Postmark retrying it changes nothing
      expect((await postPostmark(complaint)).body).to.deep.equal({ recorded: 1, pending: 0 });

      const message = await view('postmark', m.id, (v) => v.status === 'complained');
      expect(message.to).to.equal(null);
      expect(message.events.map((e: any) => e.type)).to.deep.equal(['sent', 'delivered', 'complained']);
      // what the report said of the person is sealed under the message's key, which is gone
      for (const e of message.events.slice(1)) expect(e.data).to.include({ recipient: null });
      expect(await accounts.postmark.client.historyTypes(m.id)).to.deep.equal(['EmailQueued', 'ProviderAccepted', 'Delivered', 'Complained']);
      const counted = (await app.request('GET', '/api/messages/aggregate', { token: app.adminToken })).body;
      expect(counted.status.complained).to.equal(aggregate.status.complained + 1);
      expect(counted.status.sent).to.equal(aggregate.status.sent - 1);

      const person = app.infra.privacy.personOf(address);
      expect(await suppressionOf('postmark', m.id)).to.deep.include({ email: null, person, reason: 'complained', source: 'complaint', detail: null });
      const again = await app.request('POST', '/api/send/transactional', {
        apiKey: sender.key,
        body: { to: address.toUpperCase(), fromEmail: sender.from, subject: 's', html: '<p>x</p>', text: 'x' },
      });
      expect(again.status).to.equal(400);
      expect(again.body.message).to.match(/is suppressed$/);

      const control = 'pm.control@example.org';
      const fired = await webhooksOf('postmark', person, async () => {
        const c = await sendTo('postmark', control);
        await postPostmark(postmark.spamComplaint({ msgId: c.id, postmarkMessageId: c.providerMessageId, recipient: control, id: 7002 }));
        return suppressionEventId('postmark', control);
      });
      expect(fired).to.deep.equal([]);
    });

    it('an erased recipient’s hard bounce: bounced, suppressed by keyed hash without the diagnostic (it quotes the address); a bounce naming someone else changes nothing', async () => {
      const address = 'pm.bounced.gone@example.org';
      const m = await sendTo('postmark', address);
      const hook = { msgId: m.id, postmarkMessageId: m.providerMessageId, recipient: address };
      await erase('postmark', address, m.id);
      const victim = 'pm.victim@example.org';
      expect((await postPostmark(postmark.bounce({ ...hook, recipient: victim, id: 7101, type: 'HardBounce', inactive: true }))).body).to.deep.equal({ recorded: 0, pending: 0 });
      expect(await accounts.postmark.client.suppressedIn(victim)).to.deep.equal([]);

      const bounce = { ...postmark.bounce({ ...hook, id: 7102, type: 'HardBounce', inactive: true }), Details: `smtp;550 5.1.1 <${address}>: user unknown` };
      const res = await postPostmark(bounce);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.deep.equal({ recorded: 1, pending: 0 });
      const message = await view('postmark', m.id, (v) => v.status === 'bounced');
      expect(message.events.at(-1).data).to.include({ bounceType: 'hard', recipient: null, diagnostic: null });
      expect(await suppressionOf('postmark', m.id)).to.deep.include({ email: null, person: app.infra.privacy.personOf(address), reason: 'bounced', source: 'bounce', detail: null });
      // nothing of the address went into the log in clear
      const { rows } = await app.infra.db.raw(`SELECT count(*)::int AS n FROM events WHERE data::text ILIKE ? OR metadata::text ILIKE ?`, [`%${address}%`, `%${address}%`]);
      expect(rows[0].n).to.equal(0);
    });

    it('a message past retention, its recipient kept: the bounce is recorded and suppresses the reported address, with its webhook, as before', async () => {
      const address = 'pm.old.reader@example.org';
      const id = await queueDirect(app, { accountId: accounts.postmark.accountId, provider: 'postmark', to: address, queuedAt: new Date(Date.now() - 41 * DAY).toISOString() }, { heldBySender: true });
      await accepted(id, 'pm-old-1', 'postmark');
      await expire(app.adminToken, id);

      const res = await postPostmark(postmark.bounce({ msgId: id, postmarkMessageId: 'pm-old-1', recipient: address, id: 7201, type: 'HardBounce', inactive: true }));
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.deep.equal({ recorded: 1, pending: 0 });
      const message = await view('postmark', id, (v) => v.status === 'bounced');
      expect(message.to).to.equal(null);
      expect(await suppressionOf('postmark', id)).to.deep.include({ email: address, reason: 'bounced', source: 'bounce' });
      const eventId = await suppressionEventId('postmark', address);
      const [delivery] = await eventually(() => deliveriesOf('postmark', eventId), (d) => d.length === 1);
      expect(delivery.event).to.equal('contact.bounced');
    });
  });

  describe('SES', () => {
    it('an erased recipient: delivery and bounce are recorded on the message, the keyed hash is suppressed (no address, no webhook)', async () => {
      const address = 'ses.gone@example.org';
      const m = await sendTo('ses', address);
      const event = { msgId: m.id, sesMessageId: m.providerMessageId, recipients: [address] };
      await erase('ses', address, m.id);

      const delivered = await notify('Delivery', event);
      expect(delivered.status, JSON.stringify(delivered.body)).to.equal(200);
      expect(delivered.body).to.deep.equal({ recorded: 1, pending: 0 });
      const bounced = await notify('Bounce', event);
      expect(bounced.status, JSON.stringify(bounced.body)).to.equal(200);
      expect(bounced.body).to.deep.equal({ recorded: 1, pending: 0 });
      // SNS delivering it again changes nothing
      expect((await notify('Bounce', event)).body).to.deep.equal({ recorded: 1, pending: 0 });

      const message = await view('ses', m.id, (v) => v.status === 'bounced');
      expect(message.events.map((e: any) => e.type)).to.deep.equal(['sent', 'delivered', 'bounced']);
      const person = app.infra.privacy.personOf(address);
      expect(await suppressionOf('ses', m.id)).to.deep.include({ email: null, person, reason: 'bounced', source: 'bounce', detail: null });

      const control = 'ses.control@example.org';
      const fired = await webhooksOf('ses', person, async () => {
        const c = await sendTo('ses', control);
        await notify('Bounce', { msgId: c.id, sesMessageId: c.providerMessageId, recipients: [control] });
        return suppressionEventId('ses', control);
      });
      expect(fired).to.deep.equal([]);
    });

    it('a message past retention, its recipient kept: the complaint (by SES’s id alone) suppresses the reported address, with its webhook', async () => {
      const address = 'ses.old.reader@example.org';
      const id = await queueDirect(app, { accountId: accounts.ses.accountId, provider: 'ses', to: address, queuedAt: new Date(Date.now() - 41 * DAY).toISOString() }, { heldBySender: true });
      await accepted(id, 'ses-old-1', 'ses');
      await expire(accounts.ses.token, id);
      await eventually(() => app.infra.db('provider_message_ids').where({ provider_message_id: 'ses-old-1' }).first(), Boolean);

      const res = await notify('Complaint', { sesMessageId: 'ses-old-1', recipients: [address] });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.deep.equal({ recorded: 1, pending: 0 });
      await view('ses', id, (v) => v.status === 'complained');
      expect(await suppressionOf('ses', id)).to.deep.include({ email: address, reason: 'complained', source: 'complaint' });
      const eventId = await suppressionEventId('ses', address);
      const [delivery] = await eventually(() => deliveriesOf('ses', eventId), (d) => d.length === 1);
      expect(delivery.event).to.equal('contact.complained');
    });
  });

  /** the provider's acceptance of a message queued directly, as the send worker records it */
  async function accepted(id: string, providerMessageId: string, provider: string) {
    await execute(messageDecider, { kind: 'providerAccepted', providerMessageId, provider, attempt: 1, now: new Date().toISOString() }, {
      eventStore: app.infra.eventStore,
      streamId: `message-${id}`,
      metadata: { actor: 'system:test' },
    });
  }

  /** a retention of 30 days for the account, applied now: message `id` (queued 41 days ago) reads as null */
  async function expire(token: string, id: string) {
    expect((await app.request('PATCH', '/api/settings', { token, body: { retentionDays: 30 } })).status).to.equal(200);
    await retentionOf(app).apply();
    await eventually(() => app.infra.db('messages').where({ id }).first('to_address'), (r) => r?.to_address === null);
  }
});
